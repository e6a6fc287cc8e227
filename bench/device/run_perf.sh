#!/bin/bash
# Device run: decode benchmarks (and optional profile) of synthetic shapes on the H200.
# Usage: bash .devrun/run_perf.sh "PRECISIONS" "SHAPES" [profile]
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
for shape in $2; do for prec in $1; do
  if [ "$3" = profile ]; then bench_model ogx $shape $prec "--provider-option enable_profiling=1" _prof
  else bench_model ogx $shape $prec; fi
done; done
