# Sourced by every device-run script (from .devrun/, the repository root as working directory): unpacks the Vulkan
# loader (.gl) and ogx's Debian libraries, and defines the helpers the scripts share.
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -d .devrun/lib ] || (cd .devrun && tar xJf libs.tar.xz)
# The binaries may travel packed (bin.tar.xz: ogx, ogx_engine_tests, ogx_vulkan_tests, ogx_vulkan_bench, stripped).
[ -f .devrun/bin.tar.xz ] && (cd .devrun && tar xJf bin.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib

# bench_model BINARY SHAPE PRECISION [EXTRA_ARGS] [TAG]: ogx bench --synthetic of .devrun/shapes/SHAPE.json (prompt
# $PROMPT_LEN, default 128; $GEN_LEN new tokens, default 128; median of 3) into $OUT/BINARY_SHAPE_PRECISION[TAG].json, one summary
# line printed.
bench_model() {
  local out=$OUT/$1_$2_$3$5
  timeout 300 ./.devrun/$1 bench --synthetic .devrun/shapes/$2.json --precision $3 --provider vulkan $4 \
    --prompt-len ${PROMPT_LEN:-128} --gen-len ${GEN_LEN:-128} --repeats 3 --json > $out.json 2> $out.err
  echo "$1 $2 $3 $5: $(grep -o '"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"dispatches":[0-9.]*\|"barriers":[0-9.]*\|"replay_run_us_median":[0-9.]*\|"replay_gpu_us_median":[0-9.]*\|"queued_runs":[0-9.]*\|"dropped_runs":[0-9.]*\|"load_ms":[0-9.]*\|"peak_rss_mib":[0-9.]*\|"gpu_us[^,]*' $out.json | tr '\n' ' ')"
}

# use_validation: Khronos validation layers from .devrun, and the golden models / repository where the test
# binaries (built here) look for them.
use_validation() {
  mkdir -p /work && ln -sfn $PWD/.devrun/shared /work/shared && ln -sfn $PWD /work/main
  mkdir -p /tmp/vl && dpkg -x .devrun/vulkan-validationlayers_*.deb /tmp/vl
  export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
  export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
  # The layers' libraries and ogx's (ICU, OpenSSL through cpp-httplib) use up glibc's static TLS surplus, after which
  # the driver's libnvidia-tls fails to load ("cannot allocate memory in static TLS block": no device found).
  export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4194304
}

# gpu_tests [KERNEL_FILTER]: the Vulkan kernel suite (only the tests KERNEL_FILTER selects when given; "none": no
# kernel tests), then the golden / device-sampling / default-model tests on the GPU, with validation layers on (in a
# subshell: the layers stay out of later benchmarks).
gpu_tests() {
  (
    use_validation
    if [ "${1:-}" != none ]; then
      timeout 150 ./.devrun/ogx_vulkan_tests --gtest_filter="${1:-*}" > $OUT/kernels.txt 2>&1
      grep -E "device:|FAILED|PASSED|SKIPPED \]" $OUT/kernels.txt | tail -6
    fi
    OGX_TEST_VULKAN_DEVICE=gpu timeout 200 ./.devrun/ogx_engine_tests \
      --gtest_filter='*vulkan*:DefaultModel.Vulkan*' > $OUT/golden.txt 2>&1
    grep -E "near-tie|parity|FAILED|PASSED" $OUT/golden.txt | tail -12
  )
}
