#!/bin/bash
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
for b in ogx ogx_u32_t256 ogx_u32_t64 ogx_u32_t128 ogx ogx_u32_t64; do run $b int4; done
for q in 64 128 256; do echo "== q4 threads $q"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only --q4-threads $q 2>&1 | grep -E "^\| int4"; done
run ogx_u32_t64 fp16
