#!/bin/bash
# Device run: the whole Vulkan kernel suite, the golden/device-sampling/default-model tests on the GPU with validation,
# and the 1B decode, at the final commit.
source "$(dirname "$0")/env.sh"
gpu_tests
for prec in fp16 int4; do bench_model ogx llama-3.2-1b $prec; done
