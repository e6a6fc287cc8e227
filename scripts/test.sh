#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test suite (ctest), in parallel where it helps; then the
# sanitizer stage (scripts/test-sanitizers.sh: ASan + UBSan + LSan build of the CPU tests). OGX_SANITIZERS=0 skips
# that stage. Last, each libFuzzer target runs OGX_FUZZ_SECONDS (default 10) over its seeds (scripts/fuzz.sh);
# OGX_FUZZ_SECONDS=0 skips that stage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 900
if [ "${OGX_SANITIZERS:-1}" != 0 ]; then bash scripts/test-sanitizers.sh; fi
if [ "${OGX_FUZZ_SECONDS:-10}" != 0 ]; then bash scripts/fuzz.sh "${OGX_FUZZ_SECONDS:-10}"; fi
