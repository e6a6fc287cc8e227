#!/bin/bash
# Copy-free decode steps + spread argmax (123377f, ogx_new) against aaeb73b (ogx_cur), alternated, and an
# experiment build of 123377f whose interior barriers name only the compute stage (ogx_cb); then the new build's
# profile (device sampling now timed) and the goldens / device sampling / default model with validation.
source "$(dirname "$0")/env.sh"
for r in 1 2; do for b in ogx_new ogx_cur ogx_cb; do bench_model $b llama-3.2-1b fp16 "" _${b}_$r; done; done
for b in ogx_new ogx_cur; do bench_model $b llama-3.2-1b int4 "" _$b; done
bench_model ogx_new llama-3.2-1b fp16 "--provider-option enable_profiling=1" _prof
gpu_tests '*Sampling*:*Replay*:*Memory*'
