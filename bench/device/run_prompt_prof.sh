#!/bin/bash
# Device run: GPU time per op type of the prompt (prompt 512) and of the decode step, 1B fp16 and int4, profiled.
source "$(dirname "$0")/env.sh"
for prec in fp16 int4; do
  PROMPT_LEN=512 bench_model ogx llama-3.2-1b $prec "--provider-option enable_profiling=1" _prof512 > /dev/null
  tr ',' '\n' < $OUT/ogx_llama-3.2-1b_${prec}_prof512.json | grep -E "prompt_gpu_us|prefill_tok_s"
done
