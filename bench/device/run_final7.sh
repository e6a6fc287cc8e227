#!/bin/bash
# Session 6: the kernel suite and the goldens with validation (build ogx_new = HEAD), then 1B decode of HEAD against
# knockout builds that skip one dispatch per step (ogx_koattn: the one-token attention, ogx_kosamp: the argmax; their
# tokens are meaningless, only the step time counts) and the one-token attention at 128 threads (ogx_at128), then
# HEAD's 1B prompt 512.
source "$(dirname "$0")/env.sh"
gpu_tests
for b in ogx_new ogx_koattn ogx_kosamp ogx_at128; do bench_model $b llama-3.2-1b fp16 "" _1; done
for b in ogx_at128 ogx_new; do bench_model $b llama-3.2-1b int4 "" _1; done
bench_model ogx_new llama-3.2-1b fp16 "" _2
for prec in fp16 int4; do PROMPT_LEN=512 bench_model ogx_new llama-3.2-1b $prec "" _p512; done
