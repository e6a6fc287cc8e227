#!/bin/bash
# Device run: the int4 unroll build against the previous one, both precisions, alternated.
source "$(dirname "$0")/env.sh"
bench_model ogx_unroll llama-3.2-1b int4; bench_model ogx llama-3.2-1b int4
bench_model ogx_unroll llama-3.2-1b fp16; bench_model ogx llama-3.2-1b fp16
