#!/bin/bash
# Device run: dependent-matvec chains at several matvec shapes, then the 1B fp16 decode with profile.
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
for args in "" "--rows 4" "--rows 2" "--threads 128" "--threads 128 --rows 4" "--threads 64 --rows 2"; do
  echo "== $args"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $args 2>&1 | grep -E "^\| (fp16|int4)|device"
done
bash .devrun/run_perf.sh "fp16" "llama-3.2-1b"
bash .devrun/run_perf.sh "fp16" "llama-3.2-1b" profile
grep -o '"gpu_us[^,]*' $OUT/profile_llama-3.2-1b_fp16.json
