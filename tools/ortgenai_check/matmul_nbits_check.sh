#!/usr/bin/env bash
# MatMulNBits (4-bit, accuracy_level 4) of ogx's CPU provider against ONNX Runtime 1.30.0's, bit for bit, on one-node
# models: every shape below at M = 1..19, 31..33, 43, 64, 100, 129, 255..257, 512, ONNX Runtime on 2 threads and
# ogx on 1, 2 and 3. ONNX Runtime runs through onnxruntime-node (`npm pack` of onnxruntime-node and
# onnxruntime-common 1.30.0, never `npm install`); needs the npm registry once, so it is not part of CI.
# usage: tools/ortgenai_check/matmul_nbits_check.sh [BUILD_DIR] [BLOCK_SIZE]   (default build, 32)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
block=${2:-32}
cache=${OGX_ORTGENAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ogx-ortgenai}
bash "$root/tools/ortgenai_check/fetch.sh" "$cache"
mods="$cache/node_modules"
if [ ! -f "$mods/onnxruntime-common/package.json" ]; then
  mkdir -p "$mods/onnxruntime-node" "$mods/onnxruntime-common"
  (cd "$cache/pack" && { [ -f onnxruntime-common-1.30.0.tgz ] || npm pack --silent onnxruntime-common@1.30.0 >/dev/null; })
  tar xzf "$cache/pack/onnxruntime-node-1.30.0.tgz" -C "$mods/onnxruntime-node" --strip-components=1
  tar xzf "$cache/pack/onnxruntime-common-1.30.0.tgz" -C "$mods/onnxruntime-common" --strip-components=1
fi
cmake --build "$build" --target ogx_cpu ogx_onnx ogx_exec ogx_common >/dev/null
driver="$build/matmul_nbits_ogx"
c++ -std=gnu++20 -O2 -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I"$root/src" -I"$root/include" \
  "$root/tools/ortgenai_check/matmul_nbits_ogx.cpp" -o "$driver" "$build/src/providers/cpu/libogx_cpu.a" \
  "$build/src/exec/libogx_exec.a" "$build/src/onnx/libogx_onnx.a" "$build/src/common/libogx_common.a" \
  -lonnx_proto -lprotobuf -lpthread
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ms=$(seq -s, 1 19),31,32,33,43,64,100,129,255,256,257,512
fail=0
# K N zero_points bias: the qwen3 test model's projections (q/gate/up, k/v, o/down, lm_head), K and N off the
# kernel's tiles (groups of 4 blocks, 4 columns), larger ones
for shape in "64 128 0 0" "64 64 0 0" "128 64 0 0" "64 2048 0 0" "200 37 1 1" "256 67 0 1" "1056 1027 1 0" \
             "2048 512 0 0" "96 5 1 1"; do
  read -r K N zp bias <<<"$shape"
  d="$work/$K-$N"
  NODE_PATH="$mods" node "$root/tools/ortgenai_check/matmul_nbits_ort.js" "$d" "$K" "$N" "$block" "$zp" "$bias" 2 "$ms"
  for threads in 1 2 3; do
    if out=$("$driver" "$d" "$K" "$N" "$threads" "$ms"); then
      echo "K=$K N=$N block=$block zp=$zp bias=$bias threads=$threads: bit-identical at every M"
    else
      fail=1
      echo "$out" | grep -v ' 0 of ' | sed "s/^/threads=$threads block=$block zp=$zp bias=$bias /"
    fi
  done
done
exit $fail
