#!/bin/bash
# Device run: the 1B decode with several builds (tuning variants), then matvec chains.
source "$(dirname "$0")/env.sh"
for b in ogx ogx_r2_t256 ogx_r4_t256 ogx_r2_t128; do bench_model $b llama-3.2-1b fp16; done
for b in ogx_r2_t256 ogx; do bench_model $b llama-3.2-1b int4; done
bench_model ogx_r2_t256 llama-3.2-1b fp16 "" _again
for args in "" "--rows 2" "--rows 4" "--rows 2 --threads 128" "--rows 2 --threads 64"; do
  echo "== $args"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $args 2>&1 | grep -E "^\| (fp16|int4)"
done
