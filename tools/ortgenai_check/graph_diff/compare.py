"""Prints, per exposed node output (graph order), how many float32 values differ between two run directories."""
import sys

import numpy as np

names_file, a, b = sys.argv[1:4]
rows = [l.split("\t") for l in open(names_file).read().strip().split("\n")] + [["logits", ""]]
for i, (name, op) in enumerate(rows):
    x = np.fromfile(f"{a}/{i}.bin", dtype=np.float32)
    y = np.fromfile(f"{b}/{i}.bin", dtype=np.float32)
    if x.size != y.size:
        print(f"{i:3d} {op:34s} sizes differ: {x.size} {y.size}  {name}")
        continue
    diff = int((x != y).sum())
    print(f"{i:3d} {op:34s} {diff:7d} of {x.size:8d} differ, max {np.abs(x - y).max() if x.size else 0:.3g}  {name}")
