#!/bin/bash
# Device run: decode-only GPU profile split (1B fp16 and int4).
source "$(dirname "$0")/env.sh"
for prec in fp16 int4; do bench_model ogx llama-3.2-1b $prec "--provider-option enable_profiling=1" _prof; done
