#!/usr/bin/env bash
# First run: installs dependencies, builds ogx, lists GPUs, and generates from a model folder.
# Usage: scripts/run.sh [MODEL_DIR] (default: the golden llama model in ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
model=${1:-../shared/golden/models/llama/fp32-cpu}
./build/tools/ogx/ogx devices || echo "(no Vulkan device: running on the CPU)"
./build/tools/ogx/ogx generate "$model" --ids 1,1935,1281,1402 --max-new-tokens 24 --greedy --json
