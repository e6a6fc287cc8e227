#!/bin/bash
# Final device run of session 5: the kernel suite and the goldens with validation (build ogx_cur), the 1B decode of
# the one-token attention with more keys per workgroup (ogx_k64 / k128 / k256: the tuning's decode_group_keys)
# against ogx_cur, alternated, then the 1B prompt 512 and the 8B fp16 decode of ogx_cur.
source "$(dirname "$0")/env.sh"
gpu_tests
for b in ogx_cur ogx_k64 ogx_k128 ogx_k256; do for prec in fp16 int4; do bench_model $b llama-3.2-1b $prec "" _1; done; done
for prec in fp16 int4; do bench_model ogx_cur llama-3.2-1b $prec "" _2; done
for prec in fp16 int4; do PROMPT_LEN=512 bench_model ogx_cur llama-3.2-1b $prec "" _p512; done
bench_model ogx_cur llama-3.1-8b fp16 "" _1
