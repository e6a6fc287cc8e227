#!/bin/bash
# Device run: one-token attention calls in a row (and the matvec chains) at three decode-attention thread counts.
source "$(dirname "$0")/env.sh"
for args in "" "--attn-threads 128" "--attn-threads 64"; do
  echo "== $args"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $args 2>&1 | grep -E "^\| (fp16|int4|attention)"
done
