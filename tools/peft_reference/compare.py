#!/usr/bin/env python3
"""ogx's LoRA adapters against PyTorch (+ PEFT where installed) on random-weight checkpoints: for each architecture
config given (default: llama, qwen2 and phi3 of src/builder/tests/data/arch), writes a random checkpoint and a
random PEFT LoRA with ogx_build, builds the folder with --adapter (fp32), and compares the greedy tokens of ogx
(Python module; the adapter activated with og.Adapters) on each provider asked for with make_reference.py's tokens
(every method available there). Prints one JSON line per case and exits 1 on any mismatch.

usage: PYTHONPATH=build/src/api/python python3 tools/peft_reference/compare.py [--build build]
           [--providers cpu,dml] [--configs a.json,b.json] [-n 16]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_reference  # noqa: E402

PROMPT = [1, 17, 93, 5, 200, 41, 8, 77, 3]


def ogx_tokens(folder, adapter, provider, n):
    import numpy as np
    import ogx as og
    cfg = og.Config(folder)
    cfg.clear_providers()
    if provider != "cpu":
        cfg.append_provider("dml")
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--providers", default="cpu")
    ap.add_argument("--configs", default=",".join(os.path.join(REPO, "src/builder/tests/data/arch", a + ".json")
                                                  for a in ("llama", "qwen2", "phi3")))
    ap.add_argument("-n", type=int, default=16)
    a = ap.parse_args()
    tool = os.path.join(a.build, "src", "builder", "ogx_build")
    ok = True
    for config in a.configs.split(","):
        work = tempfile.mkdtemp(prefix="lora_compare_")
        run = lambda *args: subprocess.run([tool, *args], check=True, stdout=subprocess.DEVNULL)  # noqa: E731
        run("--config", config, "--save-hf", f"{work}/hf", "--init-std", "0.1")
        run("--config", config, "--save-lora", f"{work}/tuned", "--lora-r", "8", "--lora-alpha", "16",
            "--init-std", "0.05")
        run("-i", f"{work}/hf", "-o", f"{work}/model", "-p", "fp32", "-e", "cpu", "--adapter", f"{work}/tuned")
        refs = {m: make_reference.METHODS[m](f"{work}/hf", f"{work}/tuned", PROMPT, a.n)
                for m in make_reference.METHODS if make_reference.available(m)}
        for provider in a.providers.split(","):
            got = ogx_tokens(f"{work}/model", f"{work}/model/tuned.onnx_adapter", provider, a.n)
            match = all(got == r for r in refs.values())
            ok &= match
            print(json.dumps({"config": os.path.basename(config), "provider": provider, "ogx": got,
                              "reference": refs, "match": match}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
