#!/bin/bash
# Queued decode steps (49d82e5, ogx_q) against the build before them (7ee2118, ogx_cur), alternated; first the
# goldens / device sampling / default model with validation on the GPU (engine tests of ogx_q).
source "$(dirname "$0")/env.sh"
gpu_tests none
for prec in fp16 int4; do for b in ogx_q ogx_cur; do bench_model $b llama-3.2-1b $prec "" _$b; done; done
