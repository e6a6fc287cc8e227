#!/bin/bash
# Session 6 final numbers not in run_final7.sh: 8B fp16 / int4 decode, Phi-3-mini fp16 at prompt 512 (ogx_new = HEAD).
source "$(dirname "$0")/env.sh"
for prec in fp16 int4; do bench_model ogx_new llama-3.1-8b $prec "" _1; done
PROMPT_LEN=512 bench_model ogx_new phi-3-mini-4k fp16 "" _p512
