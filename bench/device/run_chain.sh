#!/bin/bash
# Device run: dependent-matvec chains at several matvec shapes, then the 1B fp16 decode with profile.
source "$(dirname "$0")/env.sh"
for args in "" "--rows 4" "--rows 2" "--threads 128" "--threads 128 --rows 4" "--threads 64 --rows 2"; do
  echo "== $args"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $args 2>&1 | grep -E "^\| (fp16|int4)|device"
done
bench_model ogx llama-3.2-1b fp16
bench_model ogx llama-3.2-1b fp16 "--provider-option enable_profiling=1" _prof
