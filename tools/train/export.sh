#!/usr/bin/env bash
# Turns tools/train/train.py's output into the committed model: adds the tokenizer and generation settings to the
# Hugging Face folder, converts it with ogx's own builder (`ogx build`) to fp16 and int4 CPU folders, and copies the
# parity references beside them: the training run's fp32 logits, and the int4 reference (the same forward pass on the
# int4 folder's weights, dequantized) computed here by tools/train/int4_reference.py (needs torch: python3-torch).
# Usage: tools/train/export.sh TRAIN_OUT [DATA_DIR=.train/data] [MODEL_DIR=models/ogx-debian-10m]
set -euo pipefail
cd "$(dirname "$0")/../.."
train_out=${1:?usage: tools/train/export.sh TRAIN_OUT [DATA_DIR] [MODEL_DIR]}
data=${2:-.train/data}
dst=${3:-models/ogx-debian-10m}
ogx=${OGX:-./build/tools/ogx/ogx}
hf=$(mktemp -d)
trap 'rm -rf "$hf"' EXIT
cp "$train_out"/hf/config.json "$train_out"/hf/*.safetensors "$train_out"/hf/model.safetensors.index.json "$hf"/
cp "$data"/tokenizer.model tools/train/tokenizer_config.json tools/train/generation_config.json "$hf"/
for p in fp16 int4; do
  rm -rf "${dst:?}/$p"
  "$ogx" build -i "$hf" -o "$dst/$p" -p "$p" -e cpu
done
mkdir -p "$dst/parity"
cp "$train_out"/reference.json "$train_out"/reference_logits.bin "$dst/parity/"
chmod u+w "$dst"/parity/*
/usr/bin/python3 tools/train/int4_reference.py "$train_out/hf" "$dst/parity"
du -cb "$dst"/fp16/* "$dst"/int4/* "$dst"/parity/* | tail -1
