#!/bin/bash
# One-token attention with subgroup max / sum when a subgroup holds one head's scores (ogx_sg) against 12040b0
# (ogx_new), alternated, 1B fp16 twice and int4 once; first the attention kernel tests and the goldens with validation.
source "$(dirname "$0")/env.sh"
gpu_tests '*Gqa*:*ttention*:*Tuning*'
for r in 1 2; do for b in ogx_sg ogx_new; do bench_model $b llama-3.2-1b fp16 "" _$r; done; done
for b in ogx_sg ogx_new; do bench_model $b llama-3.2-1b int4 "" _1; done
