#!/usr/bin/env python3
"""Greedy tokens of a Hugging Face checkpoint with a PEFT LoRA applied, in PyTorch: the reference ogx's adapters
are checked against (issue 22). Run it on the machine that has PyTorch (the GPU machine); no ogx code is used.

Usage:
  make_reference.py HF_DIR PEFT_DIR --prompt-ids 1,17,93,5 -n 12 [--method auto|peft|by-hand|reference] [--all]

Prints JSON: {"tokens": [...new ids...], "method": ..., "prompt_ids": [...]}; with --all, one entry per method
available ({"methods": {name: tokens}, "agree": bool}). Exactly N tokens are picked with the checkpoint's EOS ids
banned, as ogx does below min_length (its tests set min_length = max_length).

Methods, tried in this order by auto:
  peft       transformers + peft: PeftModel.from_pretrained on the fp32 model (PEFT's own LoRA forward)
  by-hand    transformers without peft: W += scale * B @ A on every adapted linear (scale = lora_alpha / r, or
             lora_alpha / sqrt(r) with use_rslora; alpha_pattern honoured), then the plain model
  reference  neither: src/builder/tests/torch_reference.py's float64 forward (llama, mistral, qwen2, qwen3, phi3,
             gemma2) over the merged weights
Compare with ogx:
  ogx build -i HF_DIR -o OUT -p fp32 -e cpu --adapter PEFT_DIR
  (Python) a = og.Adapters(model); a.load("OUT/<PEFT_DIR name>.onnx_adapter", "x"); generator.set_active_adapter(a, "x")
"""
import argparse
import importlib.util
import json
import math
import os
import re
import struct
import sys

import torch

torch.set_grad_enabled(False)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + en])
        dt = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[e["dtype"]]
        out[name] = torch.frombuffer(raw, dtype=dt).reshape(e["shape"]).to(torch.float64)
    return out


def lora_deltas(peft_dir):
    """{module name (model.layers.0.self_attn.q_proj): delta W [out, in] (float64)}."""
    with open(os.path.join(peft_dir, "adapter_config.json")) as f:
        cfg = json.load(f)
    if cfg.get("peft_type", "LORA") != "LORA" or cfg.get("use_dora") or cfg.get("fan_in_fan_out"):
        raise SystemExit("only plain LoRA adapters are handled here")
    t = read_safetensors(os.path.join(peft_dir, "adapter_model.safetensors"))
    deltas = {}
    for name, a in t.items():
        m = re.match(r"base_model\.model\.(.*)\.lora_A(\.default)?\.weight$", name)
        if not m:
            continue
        module = m.group(1)
        b = t[name.replace("lora_A", "lora_B")]
        r = a.shape[0]
        alpha = cfg["lora_alpha"]
        for key, v in (cfg.get("alpha_pattern") or {}).items():
            if re.fullmatch(rf"(.*\.)?({key})", module):
                alpha = v
        scale = alpha / math.sqrt(r) if cfg.get("use_rslora") else alpha / r
        deltas[module] = scale * (b @ a)
    return deltas


def eos_ids(hf_dir):
    """The checkpoint's end-of-sequence ids (config.json, else generation_config.json): ogx bans them while the
    sequence is shorter than min_length, and the tests set min_length = max_length, so the reference bans them too."""
    ids = []
    for name in ("config.json", "generation_config.json"):
        path = os.path.join(hf_dir, name)
        if os.path.exists(path):
            with open(path) as f:
                e = json.load(f).get("eos_token_id")
            if e is not None:
                ids += e if isinstance(e, list) else [e]
    return sorted(set(ids))


def greedy_loop(logits_of, prompt, n, banned=(), margins=None):
    """n greedy tokens after prompt; margins (a list), when given, receives each step's top-1 minus top-2 logit."""
    seq = list(prompt)
    for _ in range(n):
        logits = logits_of(seq).clone()
        for t in banned:
            if 0 <= t < logits.shape[-1]:
                logits[t] = -math.inf
        top = torch.topk(logits, 2)
        if margins is not None:
            margins.append(float(top.values[0] - top.values[1]))
        seq.append(int(top.indices[0]))
    return seq[len(prompt):]


MODEL_TYPES = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2",
               "Qwen3ForCausalLM": "qwen3", "Phi3ForCausalLM": "phi3", "Gemma2ForCausalLM": "gemma2"}


def transformers_dir(hf_dir):
    """hf_dir, or a temporary view of it whose config.json has the model_type transformers needs (ogx's random
    checkpoints are written from shape configs that may lack it)."""
    with open(os.path.join(hf_dir, "config.json")) as f:
        cfg = json.load(f)
    if "model_type" in cfg:
        return hf_dir
    import tempfile
    cfg["model_type"] = MODEL_TYPES[cfg["architectures"][0]]
    d = tempfile.mkdtemp(prefix="peft_reference_")
    for name in os.listdir(hf_dir):
        if name != "config.json":
            os.symlink(os.path.abspath(os.path.join(hf_dir, name)), os.path.join(d, name))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


def by_peft(hf_dir, peft_dir, prompt, n):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(transformers_dir(hf_dir), torch_dtype=torch.float32)
    model = PeftModel.from_pretrained(model, peft_dir).eval()
    return greedy_loop(lambda s: model(input_ids=torch.tensor([s])).logits[0, -1], prompt, n, eos_ids(hf_dir))


def by_hand(hf_dir, peft_dir, prompt, n):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(transformers_dir(hf_dir), torch_dtype=torch.float32).eval()
    mods = dict(model.named_modules())
    for module, d in lora_deltas(peft_dir).items():
        lin = mods[module]
        lin.weight.copy_((lin.weight.double() + d).float())
    return greedy_loop(lambda s: model(input_ids=torch.tensor([s])).logits[0, -1], prompt, n, eos_ids(hf_dir))


def by_reference(hf_dir, peft_dir, prompt, n, margins=None):
    """peft_dir None: the base model."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "src", "builder", "tests", "torch_reference.py")
    spec = importlib.util.spec_from_file_location("torch_reference", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    cfg, W = ref.load(hf_dir)
    for module, d in (lora_deltas(peft_dir) if peft_dir else {}).items():
        W[module + ".weight"] = W[module + ".weight"] + d
    return greedy_loop(lambda s: torch.as_tensor(ref.forward(cfg, W, s)[-1]), prompt, n, eos_ids(hf_dir), margins)


METHODS = {"peft": by_peft, "by-hand": by_hand, "reference": by_reference}


def available(name):
    need = {"peft": ["transformers", "peft"], "by-hand": ["transformers"], "reference": ["numpy"]}[name]
    return all(importlib.util.find_spec(m) is not None for m in need)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hf_dir")
    ap.add_argument("peft_dir")
    ap.add_argument("--prompt-ids", required=True, help="comma-separated token ids")
    ap.add_argument("-n", type=int, required=True, help="new tokens")
    ap.add_argument("--method", default="auto", choices=["auto"] + list(METHODS))
    ap.add_argument("--all", action="store_true", help="every available method, and whether they agree")
    a = ap.parse_args()
    prompt = [int(x) for x in a.prompt_ids.split(",") if x]
    if a.all:
        got = {m: METHODS[m](a.hf_dir, a.peft_dir, prompt, a.n) for m in METHODS if available(m)}
        print(json.dumps({"prompt_ids": prompt, "methods": got,
                          "agree": len({tuple(v) for v in got.values()}) <= 1}))
        return 0
    if a.method != "auto":
        tokens = METHODS[a.method](a.hf_dir, a.peft_dir, prompt, a.n)
        print(json.dumps({"prompt_ids": prompt, "method": a.method, "tokens": tokens}))
        return 0
    skipped = {}
    for m in METHODS:  # the first that is installed and works (e.g. transformers needs config.json's model_type)
        if not available(m):
            skipped[m] = "not installed"
            continue
        try:
            tokens = METHODS[m](a.hf_dir, a.peft_dir, prompt, a.n)
        except Exception as e:  # noqa: BLE001 - reported, then the next method
            skipped[m] = f"{type(e).__name__}: {e}"
            continue
        print(json.dumps({"prompt_ids": prompt, "method": m, "tokens": tokens, "skipped": skipped}))
        return 0
    raise SystemExit(f"no method worked: {skipped}")


if __name__ == "__main__":
    sys.exit(main())
