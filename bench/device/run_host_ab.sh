#!/bin/bash
# 1B decode, builds alternated in one run (machines differ by ~10%): ogx_cur (host polls the timeline, rotary
# cos/sin loaded with the first keys), ogx_block (the blocking wait of before), ogx_oldattn (the attention of
# before), ogx_r4 (4-row matvec workgroups on NVIDIA). GPU step and host time per token from replay_*_median.
source "$(dirname "$0")/env.sh"
for b in ogx_cur ogx_block ogx_oldattn ogx_r4; do for prec in fp16 int4; do bench_model $b llama-3.2-1b $prec "" _1; done; done
for b in ogx_r4 ogx_block ogx_cur; do for prec in fp16 int4; do bench_model $b llama-3.2-1b $prec "" _2; done; done
