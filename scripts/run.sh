#!/usr/bin/env bash
# First run: installs dependencies, builds ogx, and streams a generation from a model folder.
# Usage: scripts/run.sh [MODEL_DIR] [PROMPT]
# Default model: models/ogx-debian-10m, trained in-house (see its README.md): its fp16 folder on the Vulkan provider
# when `ogx devices` lists a GPU, otherwise its int4 folder on the CPU; a failed GPU run falls back to the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --runtime
# Only what runs here: the ogx CLI and the libraries it links, without debug info (a third of the compile time) and
# with nlohmann/json precompiled (the tests, APIs and debug info: scripts/test.sh, scripts/build.sh, which configure
# them back on).
OGX_TARGETS=ogx bash scripts/build.sh -DOGX_WITH_TESTS=OFF -DOGX_WITH_API=OFF -DOGX_WITH_PYTHON=OFF \
  -DOGX_DEBUG_INFO=OFF -DOGX_PRECOMPILED_JSON=ON
ogx=./build/tools/ogx/ogx
provider=cpu
if "$ogx" devices --json 2>/dev/null | grep -Eq '"type": "(discrete|integrated|virtual_gpu)"'; then provider=vulkan; fi
[ "$provider" = vulkan ] && variant=fp16 || variant=int4
model=${1:-models/ogx-debian-10m/$variant}
prompt=${2:-The best way to predict the future is}
"$ogx" devices || echo "(no Vulkan device: running on the CPU)"
input=(--ids 1,1935,1281,1402)  # a folder without a tokenizer gets token ids
for f in tokenizer.json tokenizer.json.xz tokenizer.model; do [ -e "$model/$f" ] && input=(--prompt "$prompt"); done
sampling=(--top-k 40 --top-p 0.95 --temperature 0.8 --repetition-penalty 1.1 --seed 7 --max-new-tokens 120)
echo "$model ($provider) ${input[*]}"
if [ "$provider" = vulkan ]; then
  "$ogx" generate "$model" "${input[@]}" "${sampling[@]}" --provider vulkan && exit 0
  echo "(the Vulkan run failed: running on the CPU)"
fi
"$ogx" generate "$model" "${input[@]}" "${sampling[@]}" --provider cpu
