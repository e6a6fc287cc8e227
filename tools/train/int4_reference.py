#!/usr/bin/env python3
"""Reference logits for the int4 folder: the training code's forward pass (tools/train/train.py's Llama, fp32, CPU)
on the weights that `ogx build -p int4 -e cpu` stores, dequantized: every MatMul weight (q/k/v/o, gate/up/down and
the tied embedding / lm_head) quantized blockwise along its input dimension with the builder's rule (symmetric RTN,
block 32, fp32 scale = -m/8 where m is the block's value of largest magnitude, q = clamp(roundf(x * (1/scale) + 8),
0, 15), value = (q - 8) * scale). Inputs are the cases of parity/reference.json (prompt + the fp32 reference's
greedy continuation, teacher-forced), so row for row it lines up with reference_logits.bin.

It also recomputes the fp32 reference from the same weights and prints its largest difference from the training
run's reference_logits.bin, which checks that this forward pass is the training run's.

Usage: python3 tools/train/int4_reference.py HF_DIR MODEL_DIR/parity   (needs torch; Debian: python3-torch)
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402

BLOCK = 32


def read_safetensors(folder):
    sd = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".safetensors"):
            continue
        data = open(os.path.join(folder, name), "rb").read()
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n])
        for k, v in header.items():
            if k == "__metadata__":
                continue
            assert v["dtype"] == "F16", v["dtype"]
            a, b = v["data_offsets"]
            arr = np.frombuffer(data[8 + n + a:8 + n + b], dtype="<f2").reshape(v["shape"])
            sd[k] = torch.from_numpy(arr.astype(np.float32))
    return sd


def int4_rtn(w):
    """[out, in] fp32 -> dequantized fp32, the builder's symmetric blockwise rule (quantize.cpp)."""
    out_f, in_f = w.shape
    assert in_f % BLOCK == 0
    x = w.reshape(out_f, in_f // BLOCK, BLOCK)
    mx, mn = x.max(-1, keepdim=True).values, x.min(-1, keepdim=True).values
    m = torch.where(mx.abs() > mn.abs(), mx, mn)
    scale = -m / 8.0
    recip = torch.where(scale != 0, 1.0 / scale, torch.zeros_like(scale))
    y = x * recip + 8.0  # two fp32 roundings, as in the builder (no FMA)
    fl = torch.floor(y)
    r = torch.where(y - fl >= 0.5, fl + 1, fl)  # roundf for the values that survive the clamp
    q = r.clamp(0, 15)
    return ((q - 8.0) * scale).reshape(out_f, in_f)


def run(model, cases, vocab):
    rows = []
    with torch.no_grad():
        for c in cases:
            ids = list(c["prompt"])
            for s in range(len(c["continuation"]) + 1):
                rows.append(model(torch.tensor([ids]))[0, -1].float().numpy().astype("<f4"))
                if s < len(c["continuation"]):
                    ids.append(c["continuation"][s])
    return np.stack(rows).reshape(-1, vocab)


def main():
    hf, parity = sys.argv[1], sys.argv[2]
    cfg_hf = json.load(open(os.path.join(hf, "config.json")))
    cfg = {k: cfg_hf[k] for k in train.ARCH}
    cfg["vocab_size"] = cfg_hf["vocab_size"]
    ref = json.load(open(os.path.join(parity, "reference.json")))
    sd = read_safetensors(hf)
    model = train.Llama(cfg, 0.0).eval()
    model.load_state_dict(sd)
    fp32 = run(model, ref["cases"], cfg["vocab_size"])
    stored = np.fromfile(os.path.join(parity, "reference_logits.bin"), dtype="<f4").reshape(fp32.shape)
    print(f"fp32 forward here vs the training run's reference: max |diff| {np.abs(fp32 - stored).max():.3e}")
    q = {k: (int4_rtn(v) if v.dim() == 2 else v) for k, v in sd.items()}
    model.load_state_dict(q)
    int4 = run(model, ref["cases"], cfg["vocab_size"])
    int4.tofile(os.path.join(parity, "reference_logits_int4.bin"))
    print(f"int4-dequantized vs fp32 reference: max |diff| {np.abs(int4 - stored).max():.3f}, top-1 agreement "
          f"{(int4.argmax(1) == stored.argmax(1)).sum()}/{len(stored)}")


if __name__ == "__main__":
    main()
