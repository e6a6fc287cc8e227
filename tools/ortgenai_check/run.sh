#!/usr/bin/env bash
# Cross-check of `ogx build` exports in ONNX Runtime GenAI 0.15.2 (CPU): the golden models' fp32-cpu, fp16-dml,
# int4-cpu and int4-dml builds against Hugging Face (reference.json) and ONNX Runtime GenAI on the reference
# builder's folders (ort_reference.json); the six architectures' random-weight checkpoints
# (src/builder/tests/data/arch) against the PyTorch reference logits; the rotary variants (src/builder/tests/data/rope:
# linear, llama3, yarn, longrope) against ogx's own tokens and logits. Not in CI: it needs npm's registry once.
# usage: tools/ortgenai_check/run.sh [BUILD_DIR [--only goldens|archs|rope]]
#        (a build tree with ogx_build and ogx; default build-builder, then build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-}
shift || true
if [ -z "$build" ]; then
  build="$root/build-builder"; [ -x "$build/src/builder/ogx_build" ] || build="$root/build"
fi
[ -x "$build/src/builder/ogx_build" ] || cmake --build "$build" --target ogx_build
[ -x "$build/tools/ogx/ogx" ] || cmake --build "$build" --target ogx
cache=${OGX_ORTGENAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ogx-ortgenai}
bash "$root/tools/ortgenai_check/fetch.sh" "$cache"
cc -O2 -Wall -o "$cache/lib/ortgenai_check" "$root/tools/ortgenai_check/ortgenai_check.c" -I"$cache/lib" \
  -L"$cache/lib" -lonnxruntime-genai -lm -Wl,-rpath,'$ORIGIN'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/tools/ortgenai_check/check.py" --tool "$cache/lib/ortgenai_check" \
  --ogx-build "$build/src/builder/ogx_build" --shared "$root/../shared" --arch-dir "$root/src/builder/tests/data/arch" \
  --work "$work" --ogx "$build/tools/ogx/ogx" --rope-dir "$root/src/builder/tests/data/rope" "$@"
