#!/bin/bash
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
run() {
  timeout 60 ./.devrun/$1 bench --synthetic .devrun/shapes/llama-3.2-1b.json --precision $2 --provider vulkan \
    --prompt-len 128 --gen-len 128 --repeats 3 --json > $OUT/$1_$2.json 2>/dev/null
  echo "$1 $2: $(grep -o '"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*' $OUT/$1_$2.json | tr '\n' ' ')" | tee -a $OUT/summary.txt
}
run ogx_unroll int4; run ogx int4; run ogx_unroll fp16; run ogx fp16
