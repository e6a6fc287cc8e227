#!/bin/bash
# Device run: 1B decode A/B (int4 zero-point change), profile, kernel tests + goldens + default model on the GPU with
# validation, then 8B fp16/int4.
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
run() {  # binary shape precision [extra] [tag]
  timeout 300 ./.devrun/$1 bench --synthetic .devrun/shapes/$2.json --precision $3 --provider vulkan $4 \
    --prompt-len 128 --gen-len 128 --repeats 3 --json > $OUT/$1_$2_$3$5.json 2>$OUT/$1_$2_$3$5.err
  echo "$1 $2 $3 $5: $(grep -o '"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"dispatches":[0-9.]*\|"barriers":[0-9.]*\|"replay_run_us":[0-9.]*' $OUT/$1_$2_$3$5.json | tr '\n' ' ')"
}
run ogx llama-3.2-1b int4; run ogx llama-3.2-1b fp16
run ogx llama-3.2-1b fp16 "--provider-option enable_profiling=1" _prof
grep -o '"gpu_us[^,]*' $OUT/ogx_llama-3.2-1b_fp16_prof.json
(
mkdir -p /work && ln -sfn $PWD/.devrun/shared /work/shared && ln -sfn $PWD /work/main
mkdir -p /tmp/vl && dpkg -x .devrun/vulkan-validationlayers_*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 150 ./.devrun/ogx_vulkan_tests > $OUT/kernels.txt 2>&1
grep -E "device:|FAILED|PASSED" $OUT/kernels.txt | tail -6
OGX_TEST_VULKAN_DEVICE=gpu timeout 200 ./.devrun/ogx_engine_tests --gtest_filter='*vulkan*:DefaultModel.Vulkan*' > $OUT/golden.txt 2>&1
grep -E "near-tie|parity|FAILED|PASSED" $OUT/golden.txt | tail -12
)
run ogx llama-3.1-8b int4; run ogx llama-3.1-8b fp16
