#!/usr/bin/env python3
"""ogx's LoRA adapters against PyTorch (+ PEFT where installed) on random-weight checkpoints: for each architecture
config given (default: the six of src/builder/tests/data/arch), writes a random checkpoint and a random PEFT LoRA
with ogx_build, builds the folder with --adapter (fp32), and compares the greedy tokens of ogx (Python module; the
adapter activated with og.Adapters) on each provider asked for with make_reference.py's tokens (every method
available there). Each case also reports the reference's smallest top-1 / top-2 logit margin over its steps (a
near-tie, below ~1e-3, would make an exact-match test fragile) and whether the adapter changes the base model's
tokens (else the case would not test the adapter). Prints one JSON line per case and exits 1 on any mismatch.

usage: PYTHONPATH=build/src/api/python python3 tools/peft_reference/compare.py [--build build]
           [--providers cpu,dml] [--configs a.json,b.json] [-n 16]
OGX_LORA_DEVICE_TYPE=cpu selects a CPU Vulkan driver (lavapipe) for dml on a machine without a GPU.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_reference  # noqa: E402

PROMPT = [1, 17, 93, 5, 200, 41, 8, 77, 3]
ARCH_CONFIGS = sorted(glob.glob(os.path.join(REPO, "src/builder/tests/data/arch", "*.json")))


def ogx_tokens(folder, adapter, provider, n, device_type=None):
    import numpy as np
    import ogx as og
    cfg = og.Config(folder)
    cfg.clear_providers()
    if provider != "cpu":
        cfg.append_provider("dml")
        if device_type:
            cfg.set_provider_option("dml", "hardware_device_type", device_type)
    model = og.Model(cfg)
    adapters = og.Adapters(model)
    adapters.load(adapter, "tuned")
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(PROMPT) + n, min_length=len(PROMPT) + n)
    g = og.Generator(model, params)
    g.set_active_adapter(adapters, "tuned")
    g.append_tokens(np.array([PROMPT], dtype=np.int32))
    while not g.is_done():
        g.generate_next_token()
    return [int(t) for t in g.get_sequence(0)][len(PROMPT):]


def make_case(tool, config, work, lora_args=()):
    """A random checkpoint of config, a random PEFT LoRA for it and the fp32 folder with the adapter, under work."""
    run = lambda *args: subprocess.run([tool, *args], check=True, stdout=subprocess.DEVNULL)  # noqa: E731
    run("--config", config, "--save-hf", f"{work}/hf", "--init-std", "0.1")
    run("--config", config, "--save-lora", f"{work}/tuned", "--lora-r", "8", "--lora-alpha", "16", "--init-std", "0.05",
        *lora_args)
    run("-i", f"{work}/hf", "-o", f"{work}/model", "-p", "fp32", "-e", "cpu", "--adapter", f"{work}/tuned")


def compare(tool, config, providers, n, device_type=None, lora_args=()):
    """One JSON-able record per provider: ogx's tokens, each reference method's, the margin and base checks.
    lora_args: more ogx_build --save-lora flags (e.g. --rslora, --lora-targets q_proj,down_proj)."""
    work = tempfile.mkdtemp(prefix="lora_compare_")
    try:
        return compare_in(work, tool, config, providers, n, device_type, lora_args)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a model and a checkpoint per call: never left in the temp dir


def compare_in(work, tool, config, providers, n, device_type, lora_args):
    make_case(tool, config, work, lora_args)
    refs = {m: make_reference.METHODS[m](f"{work}/hf", f"{work}/tuned", PROMPT, n)
            for m in make_reference.METHODS if make_reference.available(m) and m != "reference"}
    margins = []
    refs["reference"] = make_reference.by_reference(f"{work}/hf", f"{work}/tuned", PROMPT, n, margins)
    base = make_reference.by_reference(f"{work}/hf", None, PROMPT, n)
    out = []
    for provider in providers:
        got = ogx_tokens(f"{work}/model", f"{work}/model/tuned.onnx_adapter", provider, n, device_type)
        out.append({"config": os.path.basename(config), "provider": provider, "ogx": got, "reference": refs,
                    "match": all(got == r for r in refs.values()), "min_margin": min(margins),
                    "adapter_changes_tokens": base != refs["reference"]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--providers", default="cpu")
    ap.add_argument("--configs", default=",".join(ARCH_CONFIGS))
    ap.add_argument("-n", type=int, default=16)
    a = ap.parse_args()
    tool = os.path.join(a.build, "src", "builder", "ogx_build")
    ok = True
    for config in a.configs.split(","):
        for rec in compare(tool, config, a.providers.split(","), a.n, os.environ.get("OGX_LORA_DEVICE_TYPE")):
            ok &= rec["match"]
            print(json.dumps(rec))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
