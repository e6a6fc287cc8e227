#!/usr/bin/env bash
# Runs one of the Node tests of `ogx serve` (the official OpenAI client from tests/serve/node_modules, installed by
# scripts/setup.sh); prints SKIPPED when Node or the client is missing.
# usage: run_node_test.sh TEST.mjs OGX_BINARY MODEL_DIR [ogx serve arguments]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "SKIPPED: node is not installed"; exit 0; }
[ -f "$here/node_modules/openai/package.json" ] ||
  { echo "SKIPPED: the OpenAI client is missing from tests/serve/node_modules (scripts/setup.sh installs it)"; exit 0; }
test=$1; shift
exec timeout 600 node "$here/$test" "$@"
