#!/usr/bin/env bash
# Which node of a decoder folder first computes differently in ogx than in ONNX Runtime 1.30.0 (CPU): the float
# output of every activation node is made a graph output (graph_diff/expose_outputs.cpp), the graph runs on one
# prompt with empty past in ONNX Runtime (onnxruntime-node, set up by matmul_nbits_check.sh's steps) and in ogx's CPU
# session, and graph_diff/compare.py prints per node how many values differ, in graph order.
# usage: tools/ortgenai_check/graph_diff.sh MODEL_DIR IDS(comma-separated) [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
folder=$(cd "${1:?usage: graph_diff.sh MODEL_DIR IDS [BUILD_DIR]}" && pwd)
ids=${2:?usage: graph_diff.sh MODEL_DIR IDS [BUILD_DIR]}
build=${3:-$root/build}
here="$root/tools/ortgenai_check/graph_diff"
cache=${OGX_ORTGENAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ogx-ortgenai}
mods="$cache/node_modules"
[ -f "$mods/onnxruntime-common/package.json" ] || { echo "run matmul_nbits_check.sh once first (it unpacks onnxruntime-node)" >&2; exit 1; }
cmake --build "$build" --target ogx_cpu ogx_onnx ogx_exec ogx_common >/dev/null
c++ -std=gnu++20 -O1 -DONNX_ML=1 -DONNX_NAMESPACE=onnx "$here/expose_outputs.cpp" -o "$build/graph_diff_expose" \
  -lonnx_proto -lprotobuf
c++ -std=gnu++20 -O2 -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I"$root/src" -I"$root/include" "$here/run_ogx.cpp" \
  -o "$build/graph_diff_ogx" "$build/src/providers/cpu/libogx_cpu.a" "$build/src/exec/libogx_exec.a" \
  "$build/src/onnx/libogx_onnx.a" "$build/src/common/libogx_common.a" -lonnx_proto -lprotobuf -lpthread
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$folder"/* "$work/"  # the exposed graph beside a copy of the external data (ORT rejects links out)
"$build/graph_diff_expose" "$folder/model.onnx" "$work/exposed.onnx" > "$work/names.txt"
read -r kvh hd layers < <(/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['model']['decoder']
print(d['num_key_value_heads'], d['head_size'], d['num_hidden_layers'])" "$folder/genai_config.json")
# the KV cache outputs too (rotary and cache writes, apart from the attention arithmetic)
for ((l = 0; l < layers; l++)); do printf 'present.%d.key\tpresent key\npresent.%d.value\tpresent value\n' $l $l; done \
  >> "$work/names.txt"
mkdir -p "$work/ort" "$work/ogx"
NODE_PATH="$mods" node "$here/run_ort.js" "$work/exposed.onnx" "$work/names.txt" "$ids" "$kvh" "$hd" "$work/ort"
"$build/graph_diff_ogx" "$work/exposed.onnx" "$work/names.txt" "$ids" "$kvh" "$hd" "$layers" "$work/ogx"
/usr/bin/python3 "$here/compare.py" "$work/names.txt" "$work/ort" "$work/ogx"
