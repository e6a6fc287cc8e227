#!/usr/bin/env bash
# LoRA adapters in ONNX Runtime GenAI 0.15.2 and in ogx, on the same folders and .onnx_adapter files (issue 22):
# for random llama / qwen2 / phi3 checkpoints with two random PEFT LoRAs, `ogx build --adapter` (fp32, cpu) is run
# by both runtimes (adapter_check.c, compiled against each C API) with no adapter, with adapter x and with adapter y
# active; the tokens must be equal across the runtimes and equal the `--merge-adapter` folders' tokens. This checks
# that ONNX Runtime reads the adapter files ogx writes and accepts the LoRA inputs' zero-rank defaults, and that
# both apply them alike. Not in CI: it needs npm's registry once (fetch.sh).
# usage: tools/ortgenai_check/adapter_check.sh [BUILD_DIR]   (a build tree with ogx_build and libogx.so)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cache=${OGX_ORTGENAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ogx-ortgenai}
bash "$root/tools/ortgenai_check/fetch.sh" "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -o "$work/check_ort" "$root/tools/ortgenai_check/adapter_check.c" -I"$cache/lib" -L"$cache/lib" \
  -lonnxruntime-genai -Wl,-rpath,"$cache/lib"
cc -O2 -Wall -DUSE_OGX -o "$work/check_ogx" "$root/tools/ortgenai_check/adapter_check.c" -I"$root/include" \
  -L"$build/src/api" -logx -Wl,-rpath,"$build/src/api"
B="$build/src/builder/ogx_build"
prompt=1,17,93,5,200,41,8
fail=0
for arch in LlamaForCausalLM Qwen2ForCausalLM Phi3ForCausalLM; do
  d="$work/$arch"
  mkdir -p "$d"
  tie=false; [ $arch = Qwen2ForCausalLM ] && tie=true
  cat > "$d/config.json" <<JSON
{"architectures":["$arch"],"hidden_size":64,"intermediate_size":96,"num_hidden_layers":2,"num_attention_heads":4,
 "num_key_value_heads":2,"vocab_size":256,"max_position_embeddings":128,"rms_norm_eps":1e-6,"bos_token_id":1,
 "eos_token_id":2,"hidden_act":"silu","tie_word_embeddings":$tie}
JSON
  "$B" --config "$d/config.json" --save-hf "$d/hf" --init-std 0.1 >/dev/null
  "$B" --config "$d/config.json" --save-lora "$d/x" --lora-r 4 --init-std 0.1 --seed 5 >/dev/null
  "$B" --config "$d/config.json" --save-lora "$d/y" --lora-r 2 --rslora --lora-alpha 4 --init-std 0.1 --seed 6 >/dev/null
  "$B" -i "$d/hf" -o "$d/m" -p fp32 -e cpu --adapter "$d/x" >/dev/null
  "$B" -i "$d/hf" -o "$d/my" -p fp32 -e cpu --adapter "$d/y" >/dev/null
  cp "$d/my/y.onnx_adapter" "$d/m/"
  "$B" -i "$d/hf" -o "$d/base" -p fp32 -e cpu >/dev/null
  "$B" -i "$d/hf" -o "$d/mx" -p fp32 -e cpu --adapter "$d/x" --merge-adapter >/dev/null
  "$B" -i "$d/hf" -o "$d/mgy" -p fp32 -e cpu --adapter "$d/y" --merge-adapter >/dev/null
  for active in none x y; do
    args=(--prompt $prompt -n 12 --adapter "$d/m/x.onnx_adapter" x --adapter "$d/m/y.onnx_adapter" y)
    [ $active != none ] && args+=(--active $active)
    ort=$("$work/check_ort" "$d/m" "${args[@]}")
    ogx=$("$work/check_ogx" "$d/m" "${args[@]}")
    ref_dir=$d/base; [ $active = x ] && ref_dir=$d/mx; [ $active = y ] && ref_dir=$d/mgy
    ref=$("$work/check_ogx" "$ref_dir" --prompt $prompt -n 12)
    ref_ort=$("$work/check_ort" "$ref_dir" --prompt $prompt -n 12)
    status=ok
    if [ "$ort" != "$ogx" ] || [ "$ogx" != "$ref" ] || [ "$ref" != "$ref_ort" ]; then status=FAIL; fail=1; fi
    echo "$arch adapter=$active: ort $ort ogx $ogx merged/base $ref: $status"
  done
done
exit $fail
