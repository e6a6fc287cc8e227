"""Builds model folders with ogx_build and runs them in ONNX Runtime GenAI through ortgenai_check; prints a
table and exits non-zero on a failed check. Called by run.sh (see there).

Golden models (teacher-forced along the reference; the first differing step must be a near-tie):
  fp32-cpu: every HF token (reference.json), no tolerance; fp16-dml: HF's tokens up to a near-tie <= 0.02;
  int4-*: ONNX Runtime GenAI's tokens on the reference builder's folder (ort_reference.json), near-tie <= 0.05.
  "greedy" (free-running, EOS suppressed) is also compared with ort_reference.json for the same variant.
Architectures (data/arch): float32 logits after a 12-token prompt and each of 8 forced tokens against the PyTorch
  reference (fp32 <= 1e-4, fp16 <= 0.1), as src/builder/tests/arch_test.cpp checks ogx.
Rotary variants (data/rope: linear, llama3, yarn, longrope with original_max_position_embeddings 8), fp32-cpu (longrope:
  an If between the short and long caches) and fp32-dml (longrope: one table, shifted position ids), with --ogx:
  ONNX Runtime GenAI's free-running greedy tokens (5-id prompt, 15 tokens: longrope crosses 8) against ogx's, and
  its logits after a 12-id prompt against ogx's (<= 1e-4).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

TOL = {"fp32": 0.0, "fp16": 0.02, "int4": 0.05}


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout


def eos_of(folder):
    with open(os.path.join(folder, "genai_config.json")) as f:
        e = json.load(f)["model"]["eos_token_id"]
    return e if isinstance(e, list) else [e]


def run_tool(a, folder, prompt, forced, dump=None):
    cmd = [a.tool, folder, "--prompt", ",".join(map(str, prompt)), "--forced", ",".join(map(str, forced)),
           "--eos", ",".join(map(str, eos_of(folder)))]
    if dump:
        cmd += ["--dump-logits", dump]
    return json.loads(sh(cmd).strip().splitlines()[-1])


def goldens(a, rows):
    ok = True
    for m in ("llama", "qwen2", "phi3"):
        base = f"{a.shared}/golden/models/{m}"
        ref = json.load(open(f"{base}/reference.json"))
        ort = json.load(open(f"{base}/ort_reference.json"))
        for variant in ("fp32-cpu", "fp16-dml", "int4-cpu", "int4-dml"):
            p, e = variant.split("-")
            out = f"{a.work}/{m}_{variant}"
            sh([a.ogx_build, "-i", f"{base}/hf", "-o", out, "-p", p, "-e", e, "--threads", "2"])
            notes, forced_ok, greedy_eq = [], 0, 0
            for ci, c in enumerate(ref["cases"]):
                expect = c["greedy"] if p != "int4" else ort["tokens"][variant][ci]
                r = run_tool(a, out, c["prompt"], expect)
                diff = next((k for k, (x, y) in enumerate(zip(r["forced"], expect)) if x != y), None)
                if diff is None:
                    forced_ok += 1
                else:
                    gap = r["gap"][diff]
                    good = gap <= TOL[p] and p != "fp32"
                    ok &= good
                    notes.append(f"p{len(c['prompt'])} step {diff}: near-tie gap {gap:.4g}" + ("" if good else " FAIL"))
                same = r["greedy"] == ort["tokens"][variant][ci]
                greedy_eq += same
                if not same:
                    k = next(k for k, (x, y) in enumerate(zip(r["greedy"], ort["tokens"][variant][ci])) if x != y)
                    notes.append(f"p{len(c['prompt'])} greedy parts from ort_reference at token {k}")
            n = len(ref["cases"])
            against = "HF" if p != "int4" else "ORT ref"
            rows.append((f"{m} {variant}", f"{forced_ok}/{n} prompts: all 24 tokens = {against}",
                         f"{greedy_eq}/{n} = ort_reference", "; ".join(notes) or "-"))
    return ok


def archs(a, rows):
    ok = True
    ids = [1] + [3 + (i * 37 + 11) % 253 for i in range(1, 20)]
    for name in ("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2"):
        ref = np.fromfile(f"{a.arch_dir}/{name}.f32", dtype=np.float32).reshape(9, -1)
        hf = f"{a.work}/arch_{name}_hf"
        sh([a.ogx_build, "--config", f"{a.arch_dir}/{name}.json", "--save-hf", hf, "--init-std", "0.2", "--seed", "1234"])
        for p, e, tol in (("fp32", "cpu", 1e-4), ("fp16", "dml", 0.1)):
            out = f"{a.work}/arch_{name}_{p}"
            sh([a.ogx_build, "-i", hf, "-o", out, "-p", p, "-e", e, "--threads", "2"])
            dump = f"{out}/logits.f32"
            run_tool(a, out, ids[:12], ids[12:], dump)
            got = np.fromfile(dump, dtype=np.float32).reshape(9, -1)
            d = float(np.abs(got - ref).max())
            agree = int((got.argmax(-1) == ref.argmax(-1)).sum())
            good = d <= tol
            ok &= good
            rows.append((f"{name} {p}-{e} (random)", f"max abs logit diff vs PyTorch {d:.3g} (tol {tol})",
                         f"argmax equal {agree}/9", "-" if good else "FAIL"))
    return ok


def rope_variants(a, rows):
    ok = True
    ids = [1] + [3 + (i * 53 + 7) % 253 for i in range(1, 20)]
    for name in ("linear", "llama3", "yarn_llama", "yarn_qwen2", "longrope"):
        hf = f"{a.work}/rope_{name}_hf"
        sh([a.ogx_build, "--config", f"{a.rope_dir}/{name}.json", "--save-hf", hf, "--init-std", "0.2", "--seed", "99"])
        for e in ("cpu", "dml"):
            out = f"{a.work}/rope_{name}_{e}"
            sh([a.ogx_build, "-i", hf, "-o", out, "-p", "fp32", "-e", e, "--threads", "2"])
            r = run_tool(a, out, ids[:5], ids[5:], None)
            mine = json.loads(sh([a.ogx, "generate", out, "--provider", "cpu", "--ids", ",".join(map(str, ids[:5])), "--greedy",
                                  "--max-new-tokens", str(len(r["greedy"])), "--min-new-tokens",
                                  str(len(r["greedy"])), "--json"]))["tokens"]
            dump, mine_dump = f"{out}/ort_logits.f32", f"{out}/ogx_logits.f32"
            run_tool(a, out, ids[:12], ids[12:13], dump)
            sh([a.ogx, "generate", out, "--provider", "cpu", "--ids", ",".join(map(str, ids[:12])), "--max-new-tokens", "1",
                "--dump-logits", mine_dump, "--json"])
            d = float(np.abs(np.fromfile(dump, dtype=np.float32).reshape(2, -1)[0] -
                             np.fromfile(mine_dump, dtype=np.float32)).max())
            good = mine == r["greedy"] and d <= 1e-4
            ok &= good
            rows.append((f"rope {name} fp32-{e} (random)", f"logits after 12 ids vs ogx: max diff {d:.3g}",
                         f"{len(mine)} greedy tokens " + ("= ogx" if mine == r["greedy"] else "differ from ogx"),
                         "-" if good else "FAIL"))
    return ok


def main():
    ap = argparse.ArgumentParser()
    for k in ("tool", "ogx-build", "shared", "arch-dir", "work"):
        ap.add_argument(f"--{k}", required=True)
    ap.add_argument("--ogx", help="the ogx CLI: also check the rotary variants of --rope-dir against ogx")
    ap.add_argument("--rope-dir")
    ap.add_argument("--only", choices=["goldens", "archs", "rope"], help="run one section")
    a = ap.parse_args()
    rows = []
    ok = True
    if a.only in (None, "goldens"):
        ok &= goldens(a, rows)
    if a.only in (None, "archs"):
        ok &= archs(a, rows)
    if a.ogx and a.rope_dir and a.only in (None, "rope"):
        ok &= rope_variants(a, rows)
    print("| folder (built by ogx) | in ONNX Runtime GenAI 0.15.2 | free-running greedy | notes |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("ALL CHECKS PASSED" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
