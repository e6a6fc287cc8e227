#!/bin/bash
# Matvec workgroup shapes on the H200: dependent-matvec chains for a sweep of rows / threads (ogx_vulkan_bench
# overrides of the tuning row), then the 1B decode of builds with different NVIDIA rows, alternated in one run:
# ogx_r4 (threads 256, rows 4), ogx_r2 (rows 2), ogx_t128 (128 threads, rows 4), ogx_q128 (int4: 128 threads).
source "$(dirname "$0")/env.sh"
for o in "--rows 4" "--rows 2" "--rows 4 --threads 128" "--rows 4 --q4-threads 128" "--rows 2 --q4-threads 128"; do
  echo "== $o"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $o 2>&1 | grep -E "^\| (int4|fp16) "
done
for b in ogx_r4 ogx_r2 ogx_t128 ogx_q128; do for prec in fp16 int4; do bench_model $b llama-3.2-1b $prec "" _1; done; done
for prec in fp16 int4; do bench_model ogx_r4 llama-3.2-1b $prec "" _2; done
