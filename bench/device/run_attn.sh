#!/bin/bash
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
for args in "" "--attn-threads 128" "--attn-threads 64"; do
  echo "== $args"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $args 2>&1 | grep -E "^\| (fp16|int4|attention)"
done
