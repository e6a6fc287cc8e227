#!/bin/bash
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
for prec in fp16 int4; do
  timeout 120 ./.devrun/ogx bench --synthetic .devrun/shapes/llama-3.2-1b.json --precision $prec --provider vulkan \
    --prompt-len 128 --gen-len 128 --repeats 3 --provider-option enable_profiling=1 --json > $OUT/prof_$prec.json 2>/dev/null
  echo "$prec: $(grep -o '"decode_tok_s":[0-9.]*\|"replay[a-z_]*":[0-9.]*\|"gpu_us[^,]*' $OUT/prof_$prec.json | tr '\n' ' ')"
done
