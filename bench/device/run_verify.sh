#!/bin/bash
# Device run: the whole Vulkan kernel suite, the golden/device-sampling/default-model tests on the GPU with validation,
# and the 1B decode, at the final commit.
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
mkdir -p /work && ln -sfn $PWD/.devrun/shared /work/shared && ln -sfn $PWD /work/main
mkdir -p /tmp/vl && dpkg -x .devrun/vulkan-validationlayers_*.deb /tmp/vl
(
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 150 ./.devrun/ogx_vulkan_tests > $OUT/kernels.txt 2>&1
grep -E "device:|FAILED|PASSED|SKIPPED \]" $OUT/kernels.txt | tail -6
OGX_TEST_VULKAN_DEVICE=gpu timeout 200 ./.devrun/ogx_engine_tests --gtest_filter='*vulkan*:DefaultModel.Vulkan*' > $OUT/golden.txt 2>&1
grep -E "near-tie|parity|FAILED|PASSED" $OUT/golden.txt | tail -12
)
for prec in fp16 int4; do
  timeout 120 ./.devrun/ogx bench --synthetic .devrun/shapes/llama-3.2-1b.json --precision $prec --provider vulkan \
    --prompt-len 128 --gen-len 128 --repeats 3 --json > $OUT/bench_$prec.json 2>/dev/null
  echo "1b $prec: $(grep -o '"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"dispatches":[0-9.]*' $OUT/bench_$prec.json | tr '\n' ' ')"
done
