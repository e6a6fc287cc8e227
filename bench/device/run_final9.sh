#!/bin/bash
# Session 6 last numbers of HEAD (ogx_mg: subgroup reductions + one-round merge in the one-token attention):
# 1B int4 at prompts 128 / 512, 8B fp16 / int4, Phi-3-mini fp16 at prompt 512 (its tests passed in run_merge.sh).
source "$(dirname "$0")/env.sh"
bench_model ogx_mg llama-3.2-1b int4 "" _1
PROMPT_LEN=512 bench_model ogx_mg llama-3.2-1b int4 "" _p512
for prec in fp16 int4; do bench_model ogx_mg llama-3.1-8b $prec "" _1; done
PROMPT_LEN=512 bench_model ogx_mg phi-3-mini-4k fp16 "" _p512
