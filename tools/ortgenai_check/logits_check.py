"""ogx against ONNX Runtime GenAI, logit by logit, on one folder at prompt lengths LO..HI (issue 18).

For each length P: P seeded random ids (vocabulary ids 3.., seed 7, the same prefix for every P); ogx `generate
--greedy --max-new-tokens K --dump-logits` (the prompt's logits, then after each generated token) and
`ortgenai_check --prompt IDS --forced <ogx's tokens> --dump-logits` (teacher-forced along ogx's tokens, so both sides
see the same sequence). Prints per P the max |diff| of each row, whether it is bit-identical, the argmax of both and,
where they differ, the margin of ONNX Runtime GenAI's top two logits (a near-tie).
usage: python3 logits_check.py MODEL_DIR LO HI [--decode K] [--threads N] [--ogx BIN] [--tool ORTGENAI_CHECK]
"""
import argparse
import os
import random
import subprocess
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("folder")
ap.add_argument("lo", type=int)
ap.add_argument("hi", type=int)
ap.add_argument("--decode", type=int, default=1, help="generated tokens compared after the prompt (default 1)")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--ogx", default=os.path.join(here, "../../build/tools/ogx/ogx"))
ap.add_argument("--tool", default=os.path.expanduser("~/.cache/ogx-ortgenai/lib/ortgenai_check"))
a = ap.parse_args()

import json
cfg = json.load(open(os.path.join(a.folder, "genai_config.json")))
vocab = cfg["model"]["vocab_size"]
rng = random.Random(7)
ids_all = [rng.randrange(3, vocab) for _ in range(a.hi)]
tmp = tempfile.mkdtemp()
bad = 0
for p in range(a.lo, a.hi + 1):
    ids = ",".join(map(str, ids_all[:p]))
    ogx_bin, ort_bin = os.path.join(tmp, "ogx.bin"), os.path.join(tmp, "ort.bin")
    r = subprocess.run([a.ogx, "generate", a.folder, "--ids", ids, "--greedy", "--max-new-tokens", str(a.decode + 1),
                        "--threads", str(a.threads), "--json", "--dump-logits", ogx_bin],
                       check=True, capture_output=True, text=True)
    toks = json.loads(r.stdout.strip().splitlines()[-1])["tokens"]
    forced = toks[:a.decode] or [toks[0]]
    subprocess.run([a.tool, a.folder, "--prompt", ids, "--forced", ",".join(map(str, forced)), "--dump-logits", ort_bin],
                   check=True, capture_output=True)
    x = np.fromfile(ogx_bin, dtype=np.float32).reshape(-1, vocab)
    y = np.fromfile(ort_bin, dtype=np.float32).reshape(-1, vocab)
    rows = min(len(x), len(y), a.decode + 1)
    cells = []
    for i in range(rows):
        d = float(np.abs(x[i] - y[i]).max())
        top = np.sort(y[i])[-2:]
        note = "" if x[i].argmax() == y[i].argmax() else f" ARGMAX {x[i].argmax()}/{y[i].argmax()} margin {top[1]-top[0]:.3g}"
        cells.append(("=" if d == 0 else f"{d:.3g}") + note)
        bad += d != 0
    print(f"P={p}: " + " | ".join(cells), flush=True)
print(f"rows with any difference: {bad}")
