#!/bin/bash
# 8B decode: the nvidia row's matvec_rows 4 (HEAD, ogx_r4) against 8 (ogx_r8), alternated, fp16 and int4.
source "$(dirname "$0")/env.sh"
for prec in fp16 int4; do for b in ogx_r4 ogx_r8; do bench_model $b llama-3.1-8b $prec "" _1; done; done
