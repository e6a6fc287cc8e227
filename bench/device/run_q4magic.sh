#!/bin/bash
# Device run: int4 matvec with the nibble-to-float conversion by mantissa OR and shifts instead of divisions
# (.devrun/ogx, .devrun/bench) against the previous build (.devrun/ogx_prev, .devrun/bench_prev): dependent chains,
# then the 1B int4 decode alternated, two rounds.
source "$(dirname "$0")/env.sh"
for b in bench_prev bench; do echo "== $b"; timeout 60 ./.devrun/$b --chain-only 2>&1 | grep -E "^\| int4"; done
for round in 1 2; do for b in ogx_prev ogx; do bench_model $b llama-3.2-1b int4 "" _r$round; done; done
