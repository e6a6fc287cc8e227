#!/usr/bin/env bash
# Configures and builds ogx into build/ (Release with debug info). Extra arguments go to cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${OGX_JOBS:-$(nproc)}
dir=${OGX_BUILD_DIR:-build}
launcher=()
# ccache, where installed, makes rebuilds and other worktrees' builds cheap (optional: setup.sh does not install it).
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@"
cmake --build "$dir" -j"$jobs"
