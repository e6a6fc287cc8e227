#!/bin/bash
# Device run: the device's features, the cooperative-matrix matmul tests with validation, then prefill/decode of the
# 1B shape at prompts 128 and 512 and of the 8B shape at prompt 512.
source "$(dirname "$0")/env.sh"
./.devrun/ogx devices --json > $OUT/devices.json 2>&1; grep -o '"cooperative_matrix[a-z0-9_]*": [a-z]*' $OUT/devices.json
(use_validation; timeout 120 ./.devrun/ogx_vulkan_tests --gtest_filter="${TESTS:-*MatMul*}" > $OUT/matmul_tests.txt 2>&1
 grep -E "FAILED|PASSED|SKIPPED \]|max rel" $OUT/matmul_tests.txt | tail -8)
for prec in fp16 int4; do PROMPT_LEN=128 bench_model ogx llama-3.2-1b $prec "" _p128; done
for prec in fp16 int4; do PROMPT_LEN=512 bench_model ogx llama-3.2-1b $prec "" _p512; done
for prec in fp16 int4; do PROMPT_LEN=512 bench_model ogx llama-3.1-8b $prec "" _p512; done
