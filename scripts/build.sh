#!/usr/bin/env bash
# Configures and builds ogx into build/ (Release with debug info). Extra arguments go to cmake configure.
# OGX_TARGETS="ogx ..." builds only those targets (scripts/run.sh: the CLI); default: every target, tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${OGX_JOBS:-$(nproc)}
dir=${OGX_BUILD_DIR:-build}
launcher=()
# ccache, where installed, makes rebuilds and other worktrees' builds cheap (optional: setup.sh does not install it).
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# Tests, APIs and debug info on, precompiled json off, unless the arguments say otherwise (scripts/run.sh's first run
# configures build/ the other way; a later build.sh turns them back rather than keeping that cache).
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" -DOGX_WITH_TESTS=ON \
  -DOGX_WITH_API=ON -DOGX_WITH_PYTHON=ON -DOGX_DEBUG_INFO=ON \
  -DOGX_PRECOMPILED_JSON=OFF "$@"
targets=()
if [ -n "${OGX_TARGETS:-}" ]; then read -ra names <<<"$OGX_TARGETS"; targets=(--target "${names[@]}"); fi
cmake --build "$dir" -j"$jobs" "${targets[@]}"
