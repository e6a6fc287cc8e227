#!/bin/bash
# Dispatch chaining (command_recorder.h) on the H200: the kernel suite (incl. the chained-layers test) and the
# goldens with validation, the matvec chains / attention calls with barriers and chained, then the 1B decode with
# chaining off / on, alternated (one machine).
source "$(dirname "$0")/env.sh"
gpu_tests
timeout 120 ./.devrun/ogx_vulkan_bench --chain-only 2>&1 | tee $OUT/chain.txt | grep -E "^\|"
for round in 1 2; do
  for prec in fp16 int4; do
    bench_model ogx llama-3.2-1b $prec "--provider-option dispatch_chaining=0" _barrier$round
    bench_model ogx llama-3.2-1b $prec "" _chained$round
  done
done
