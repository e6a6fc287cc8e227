#!/bin/bash
# Dispatch chaining with backoff between polls: matvec chains / attention with barriers and chained, an int4
# matvec-shape sweep of the chains, then the 1B decode with chaining off / on alternated (GPU step time and host
# time per token from the session's replay_*_median stats).
source "$(dirname "$0")/env.sh"
timeout 60 ./.devrun/ogx_vulkan_bench --chain-only 2>&1 | tee $OUT/chain.txt | grep -E "^\|"
for o in "--q4-threads 128" "--q4-threads 64" "--rows 4"; do
  echo "== $o"; timeout 60 ./.devrun/ogx_vulkan_bench --chain-only $o 2>&1 | grep -E "^\| (int4|fp16) "
done
for round in 1 2; do
  for prec in fp16 int4; do
    bench_model ogx llama-3.2-1b $prec "--provider-option dispatch_chaining=0" _barrier$round
    bench_model ogx llama-3.2-1b $prec "--provider-option dispatch_chaining=1" _chained$round
  done
done
