#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test suite (ctest), in parallel where it helps.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 900
