#!/bin/bash
# 1B decode, builds alternated in one run: ogx_cur (rows 4), ogx_t128 (one-token attention with 128 threads),
# ogx_u1 (fp matvec: one unit of K per thread and iteration at 4 rows), ogx_lm8 (8 rows for N >= 32768: lm_head).
source "$(dirname "$0")/env.sh"
for b in ogx_cur ogx_t128 ogx_lm8; do for prec in fp16 int4; do bench_model $b llama-3.2-1b $prec "" _1; done; done
bench_model ogx_u1 llama-3.2-1b fp16 "" _1
for prec in fp16 int4; do bench_model ogx_cur llama-3.2-1b $prec "" _2; done
