#!/usr/bin/env bash
# Fetches ONNX Runtime GenAI 0.15.2 for Linux x64 with `npm pack` (never `npm install`): libonnxruntime-genai.so
# and ort_genai_c.h from com.github.asus4.onnxruntime-genai@0.4.9, libonnxruntime.so.1 (ONNX Runtime 1.30.0)
# from onnxruntime-node@1.30.0. Idempotent; needs the npm registry the first time.
# usage: fetch.sh CACHE_DIR   (files land in CACHE_DIR/lib)
set -euo pipefail
cache=${1:?usage: fetch.sh CACHE_DIR}
lib="$cache/lib"
if [ -f "$lib/libonnxruntime-genai.so" ] && [ -f "$lib/libonnxruntime.so.1" ] && [ -f "$lib/ort_genai_c.h" ]; then
  exit 0
fi
mkdir -p "$cache/pack" "$lib"
cd "$cache/pack"
[ -f com.github.asus4.onnxruntime-genai-0.4.9.tgz ] || npm pack --silent com.github.asus4.onnxruntime-genai@0.4.9 >/dev/null
[ -f onnxruntime-node-1.30.0.tgz ] || npm pack --silent onnxruntime-node@1.30.0 >/dev/null
hdr='package/Plugins/iOS~/onnxruntime-genai.xcframework/ios-arm64/onnxruntime-genai.framework/Headers/ort_genai_c.h'
tar xzf com.github.asus4.onnxruntime-genai-0.4.9.tgz package/Plugins/Linux/x64/libonnxruntime-genai.so "$hdr"
tar xzf onnxruntime-node-1.30.0.tgz package/bin/napi-v6/linux/x64/libonnxruntime.so.1
cp package/Plugins/Linux/x64/libonnxruntime-genai.so package/bin/napi-v6/linux/x64/libonnxruntime.so.1 "$lib/"
cp "$hdr" "$lib/"  # the C API header is the same on every platform
rm -rf package
grep -qa '0\.15\.2' "$lib/libonnxruntime-genai.so" || { echo "fetch.sh: libonnxruntime-genai.so is not 0.15.2" >&2; exit 1; }
(cd "$lib" && sha256sum libonnxruntime-genai.so libonnxruntime.so.1 ort_genai_c.h)
