#!/usr/bin/env bash
# Configures and builds ogx into build/ (Release with debug info). Extra arguments go to cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${OGX_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j"$jobs"
