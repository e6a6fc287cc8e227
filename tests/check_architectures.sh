#!/usr/bin/env bash
# Model-level differential check over every architecture ogx builds: for each of the seven architecture shapes in
# src/builder/tests/data/arch/*.json and tests/data/arch/*.json (2 layers, random weights) x {fp32, fp16, int4} x
# {cpu, dml} (42 folders), `ogx build` makes the folder and `ogx check` runs it on the CPU provider and on the Vulkan provider
# side by side (greedy tokens, teacher-forced logits, top-2 margin at every divergence; see tools/ogx/cmd_check.cpp).
# A FAILURE (a divergence beyond the precision's tolerance, or the Vulkan generation parting from the CPU's tokens
# before any divergence) fails the test; NEAR-TIEs are listed. A folder that falls back to the CPU provider for some
# nodes must be listed in ALLOW_FALLBACK below; `--require-no-fallback` (or OGX_CHECK_REQUIRE_NO_FALLBACK=1) allows none.
#
# usage: check_architectures.sh OGX_BINARY SOURCE_DIR [--require-no-fallback] [--full] [--device gpu]
#                                [--shapes DIR]... [--provider-option K=V]...
#   CI (lavapipe, 2 cores): prompt lengths 1,7,33 and 16 new tokens. --full: the set for a GPU run, prompt lengths
#   1,2,7,33,129 (and past the sliding window) and 32 new tokens. --device gpu: a real GPU instead of lavapipe.
#   --shapes DIR: also every DIR/*.json shape (e.g. ../shared/model-shapes: real model sizes, random weights; the
#   GPU run: `tests/check_architectures.sh build/tools/ogx/ogx . --full --device gpu --shapes ../shared/model-shapes`).
#   --provider-option K=V: passed on to every `ogx check` (e.g. tuning=decode_chunk_min_keys=1: the Vulkan
#   provider's key-chunk attention at every length).
set -uo pipefail
ogx=$1
src=$2
shift 2
require_no_fallback=${OGX_CHECK_REQUIRE_NO_FALLBACK:-0}
lengths=1,7,33
new_tokens=16
device=cpu
# The builder's architecture shapes, plus tests/data/arch (variants without a PyTorch reference of their own:
# phi4mini, partial rotary with longrope).
shapes=("$src"/src/builder/tests/data/arch/*.json "$src"/tests/data/arch/*.json)
options=()  # extra provider options of every ogx check
while [ $# -gt 0 ]; do
  case $1 in
    --require-no-fallback) require_no_fallback=1 ;;
    --full) lengths=1,2,7,33,129; new_tokens=32 ;;
    --device) device=$2; shift ;;
    --shapes) shapes+=("$2"/*.json); shift ;;
    --provider-option) options+=(--provider-option "$2"); shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

# Folders that may fall back to the CPU provider (ops the Vulkan provider lacks), e.g. "gemma2-fp32-cpu qwen3-int4-cpu".
# Empty: every folder ogx builds runs wholly on the device (measured on this branch); a builder change that emits an
# op the provider lacks then fails here until the op is added (or the folder is listed).
ALLOW_FALLBACK=""

if ! "$ogx" devices --json 2>/dev/null | grep -q '"name"'; then
  echo "SKIPPED: no Vulkan device (ogx devices lists none)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
summary=()
for arch_json in "${shapes[@]}"; do
  arch=$(basename "$arch_json" .json)
  for precision in fp32 fp16 int4; do
    for ep in cpu dml; do
      name=$arch-$precision-$ep
      dir=$work/$name
      if ! "$ogx" build --config "$arch_json" -o "$dir" -p "$precision" -e "$ep" >"$work/build.log" 2>&1; then
        echo "$name: BUILD FAILED"; cat "$work/build.log"; status=1; continue
      fi
      out=$("$ogx" check "$dir" --provider dml --provider-option hardware_device_type=$device "${options[@]}" \
              --prompt-lengths $lengths --new-tokens $new_tokens 2>"$work/check.err")
      rc=$?
      line=$(echo "$out" | tail -1)
      echo "$out" | grep '^prompt' | grep -v ' PASS ' | sed "s|^|$name: |"
      if [ $rc -ne 0 ] && ! echo "$line" | grep -q '^FAILURE'; then
        echo "$name: ERROR"; cat "$work/check.err"; status=1; summary+=("$name ERROR"); continue
      fi
      verdict=${line%%:*}
      fell_back=$(echo "$line" | sed -n 's/.* \([0-9]*\) node(s) fell back.*/\1/p')
      note=""
      if [ "${fell_back:-0}" != 0 ]; then
        note=" (fallback: ${line##*the CPU })"
        if [ "$require_no_fallback" = 1 ] || ! echo " $ALLOW_FALLBACK " | tr '\n' ' ' | grep -q " $name "; then
          verdict="FAILURE"; note="$note, not allowed to fall back"
        fi
      elif echo " $ALLOW_FALLBACK " | tr '\n' ' ' | grep -q " $name "; then
        note=" (no longer falls back: remove it from ALLOW_FALLBACK)"
      fi
      [ "$verdict" = FAILURE ] && status=1
      summary+=("$name $verdict$note")
      rm -rf "$dir"
    done
  done
done
# Per-node CPU fallback at model level: folders with op types forced onto the CPU (provider option cpu_ops), each
# stage a device -> host -> device round trip inside the step, must still give the CPU's tokens.
for forced in "gemma2 fp16 dml SimplifiedLayerNormalization,SkipSimplifiedLayerNormalization,FastGelu,Tanh" \
              "qwen3 fp32 cpu Reshape,SimplifiedLayerNormalization" "phi3 int4 cpu MatMulNBits" "llama int4 dml MatMulNBits"; do
  read -r arch precision ep ops <<<"$forced"
  name=$arch-$precision-$ep-cpu_ops
  dir=$work/$name
  "$ogx" build --config "$src/src/builder/tests/data/arch/$arch.json" -o "$dir" -p "$precision" -e "$ep" >/dev/null 2>&1
  line=$("$ogx" check "$dir" --provider dml --provider-option hardware_device_type=$device "${options[@]}" \
           --provider-option cpu_ops=$ops --provider-option enable_cpu_fallback=1 --prompt-lengths $lengths --new-tokens $new_tokens 2>"$work/check.err" | tail -1)
  verdict=${line%%:*}
  fell_back=$(echo "$line" | sed -n 's/.* \([0-9]*\) node(s) fell back.*/\1/p')
  if [ "$verdict" = FAILURE ] || [ "${fell_back:-0}" = 0 ]; then
    echo "$name: $line"; cat "$work/check.err"; status=1; verdict="FAILURE (fallback nodes: ${fell_back:-none})"
  fi
  summary+=("$name $verdict (forced fallback of $ops: ${fell_back:-0} nodes)")
  rm -rf "$dir"
done
echo "---- ogx check over ${#summary[@]} folders (prompt lengths $lengths, $new_tokens new tokens, device $device)"
printf '%s\n' "${summary[@]}"
exit $status
