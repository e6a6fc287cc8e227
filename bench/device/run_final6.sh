#!/bin/bash
# Session 5 final numbers not in run_final5.sh: 8B int4 decode, Phi-3-mini fp16 decode / prompt 512 (ogx_cur).
source "$(dirname "$0")/env.sh"
bench_model ogx_cur llama-3.1-8b int4 "" _1
PROMPT_LEN=512 bench_model ogx_cur phi-3-mini-4k fp16 "" _p512
