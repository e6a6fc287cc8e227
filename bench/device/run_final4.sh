#!/bin/bash
# Device run at the final commit: the validation test suites, then the 1B decode/prefill (prompt 128 and 512).
source "$(dirname "$0")/env.sh"
gpu_tests
for p in 128 512; do for prec in fp16 int4; do PROMPT_LEN=$p bench_model ogx llama-3.2-1b $prec "" _p$p; done; done
