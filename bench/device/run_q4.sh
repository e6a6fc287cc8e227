#!/bin/bash
# Device run: int4 matvec variants (builds with different q4 thread counts) alternated with the current build.
source "$(dirname "$0")/env.sh"
for b in ogx ogx_u32_t256 ogx_u32_t64 ogx_u32_t128; do bench_model $b llama-3.2-1b int4; done
bench_model ogx llama-3.2-1b int4 "" _again; bench_model ogx_u32_t64 llama-3.2-1b int4 "" _again
for q in 64 128 256; do echo "== q4 threads $q"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only --q4-threads $q 2>&1 | grep -E "^\| int4"; done
bench_model ogx_u32_t64 llama-3.2-1b fp16
