#!/bin/bash
# Device run at the final commit: the kernel suite and the golden / device-sampling / default-model tests with
# validation layers, then decode and prefill of the model shapes (1B at prompts 128 and 512, 8B and Phi-3-mini at 512).
source "$(dirname "$0")/env.sh"
gpu_tests
for prec in fp16 int4; do PROMPT_LEN=128 bench_model ogx llama-3.2-1b $prec "" _p128; done
for prec in fp16 int4; do PROMPT_LEN=512 bench_model ogx llama-3.2-1b $prec "" _p512; done
for prec in fp16 int4; do PROMPT_LEN=512 bench_model ogx llama-3.1-8b $prec "" _p512; done
PROMPT_LEN=512 bench_model ogx phi-3-mini-4k fp16 "" _p512
