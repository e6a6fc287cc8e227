#!/bin/bash
# Device run: decode of the 1B shape with the previous build (.devrun/ogx_base), the current one with the
# cooperative-matrix device features off (.devrun/ogx_nocoop) and the current one, alternated in one run (machines
# of this kind differ by ~10%), prompt 128; then the prompt matmul bench, portable (SIMT) and matrix-unit kernels.
source "$(dirname "$0")/env.sh"
for round in 1 2; do for prec in fp16 int4; do for b in ogx_base ogx_nocoop ogx; do
  bench_model $b llama-3.2-1b $prec "" _r$round
done; done; done
for args in "--simt" "--simt --matmul-tile 64" ""; do
  echo "== matmul $args"; timeout 100 ./.devrun/ogx_vulkan_bench --matmul-only --reps 10 $args 2>&1 | grep -E "^\| (fp16|int4)"
done
