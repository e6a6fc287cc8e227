#!/bin/bash
# The one-token attention's split merge in one memory round trip per 8 splits (ogx_mg) against the subgroup build
# before it (ogx_sg), alternated: 1B fp16 at prompt 128 twice, at prompt 512 once; first the attention kernel tests
# and the goldens with validation.
source "$(dirname "$0")/env.sh"
gpu_tests '*Gqa*:*ttention*:*Tuning*'
for r in 1 2; do for b in ogx_mg ogx_sg; do bench_model $b llama-3.2-1b fp16 "" _$r; done; done
for b in ogx_mg ogx_sg; do PROMPT_LEN=512 bench_model $b llama-3.2-1b fp16 "" _p512; done
