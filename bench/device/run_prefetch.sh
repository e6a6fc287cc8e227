#!/bin/bash
# L2 prefetch beside the one-token attention: the nvidia tuning row's l2_prefetch_mib at 0 / 8 / 24 / 40
# (ogx_pfN), alternated, 1B fp16 twice and int4 once; first the goldens / device sampling with validation (24).
# Experiment builds of 12040b0 plus an uncommitted read-only prefetch dispatch (not kept; bench/vulkan-decode.md).
source "$(dirname "$0")/env.sh"
gpu_tests none
for r in 1 2; do for b in ogx_pf0 ogx_pf8 ogx_pf24 ogx_pf40; do bench_model $b llama-3.2-1b fp16 "" _$r; done; done
for b in ogx_pf0 ogx_pf24; do bench_model $b llama-3.2-1b int4 "" _1; done
