#!/bin/bash
# Device run: 1B decode and profile, kernel tests + goldens + default model on the GPU with validation, then 8B
# fp16/int4.
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt 2>&1; cat $OUT/gpu.txt
bench_model ogx llama-3.2-1b int4; bench_model ogx llama-3.2-1b fp16
bench_model ogx llama-3.2-1b fp16 "--provider-option enable_profiling=1" _prof
gpu_tests
bench_model ogx llama-3.1-8b int4; bench_model ogx llama-3.1-8b fp16
