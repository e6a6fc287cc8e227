#!/bin/bash
# Device run: the 1B decode with several builds (tuning variants), then matvec chains.
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
run() {  # binary precision
  timeout 120 ./.devrun/$1 bench --synthetic .devrun/shapes/llama-3.2-1b.json --precision $2 --provider vulkan \
    --prompt-len 128 --gen-len 128 --repeats 3 --json > $OUT/$1_$2.json 2>/dev/null
  echo "$1 $2: $(grep -o '"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"replay_run_us":[0-9.]*' $OUT/$1_$2.json | tr '\n' ' ')"
}
for b in ogx ogx_r2_t256 ogx_r4_t256 ogx_r2_t128; do run $b fp16; done
for b in ogx_r2_t256 ogx; do run $b int4; done
run ogx_r2_t256 fp16
for args in "" "--rows 2" "--rows 4" "--rows 2 --threads 128" "--rows 2 --threads 64"; do
  echo "== $args"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $args 2>&1 | grep -E "^\| (fp16|int4)"
done
