#!/usr/bin/python3
"""Charts of benchmark results (Debian's python3-matplotlib): SVG files of

  decode_vs_batch.svg     decode tokens/s (aggregate over the batch) against batch size
  decode_vs_prompt.svg    decode tokens/s (batch 1) against prompt length
  prefill_vs_prompt.svg   prefill tokens/s against prompt length

one line per engine, model and precision; ogx solid, llama.cpp dashed with hollow markers, where the numbers exist.

Inputs: bench/data/*.json files ({"results": [...]}, each result one measurement with the fields of `ogx bench
--json`: model, precision, prompt_len, batch, decode_tok_s, prefill_tok_s; plus engine, default "ogx"), or files of
`ogx bench --json` lines as the command prints them (one JSON object per line).

  /usr/bin/python3 bench/plot.py [-o bench/charts] [FILE.json ...]     (default: bench/data/*.json)
"""
import argparse
import glob
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    """Results of one file: a {"results": [...]} document, or `ogx bench --json` output (JSON lines)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
        rows = doc["results"] if isinstance(doc, dict) and "results" in doc else [doc]
    except json.JSONDecodeError:
        rows = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    out = []
    for r in rows:
        r = dict(r)
        r.setdefault("engine", "ogx")
        r.setdefault("batch", 1)
        # `ogx bench` names a folder by its path: label it by the folder's name.
        r["model"] = os.path.basename(os.path.normpath(str(r.get("model", "?"))))
        r.setdefault("precision", r.get("provider", ""))
        out.append(r)
    return out


def series(rows, metric, x, where=lambda r: True):
    """{(engine, model, precision): sorted [(x, value)]}; the newest row wins where one point appears twice
    (files are read in order, rows in file order)."""
    points = defaultdict(dict)
    for r in rows:
        if metric in r and x in r and where(r):
            points[(r["engine"], r["model"], r["precision"])][r[x]] = r[metric]
    return {k: sorted(v.items()) for k, v in points.items()}


def draw(path, title, xlabel, ylabel, lines, logx=False):
    if not lines:
        print(f"plot.py: no data for {os.path.basename(path)}: skipped", file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = {}
    for (engine, model, precision), pts in sorted(lines.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        key = (model, precision)
        color = colors.setdefault(key, f"C{len(colors) % 10}")
        xs, ys = zip(*pts)
        llama = engine != "ogx"
        ax.plot(xs, ys, linestyle="--" if llama else "-", marker="o" if not llama else "s", color=color,
                markerfacecolor="none" if llama else color, label=f"{engine} {model} {precision}")
        for xv, yv in pts:
            ax.annotate(f"{yv:,.0f}", (xv, yv), textcoords="offset points", xytext=(4, 4), fontsize=7, color=color)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({xv for pts in lines.values() for xv, _ in pts}))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_yscale("log")
    count = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")
    ax.yaxis.set_major_formatter(count)
    ax.yaxis.set_minor_formatter(count)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    # A fixed hash salt and no date keep the SVG identical between runs on the same data.
    fig.savefig(path, metadata={"Date": None} if path.endswith(".svg") else None, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="result files (default: bench/data/*.json)")
    ap.add_argument("-o", "--out", default=os.path.join(HERE, "charts"), help="output folder")
    ap.add_argument("--format", default="svg", choices=["svg", "png"], help="image format (default svg)")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(HERE, "data", "*.json")))
    if not files:
        sys.exit("plot.py: no result files")
    rows = [r for f in files for r in load(f)]
    os.makedirs(args.out, exist_ok=True)
    matplotlib.rcParams["svg.hashsalt"] = "ogx"
    draw(os.path.join(args.out, "decode_vs_batch." + args.format), "Decode: aggregate tokens/s by batch size (prompt 128)",
         "batch size (sequences decoded together)", "tokens/s",
         series(rows, "decode_tok_s", "batch", lambda r: r.get("prompt_len") == 128 or r["engine"] != "ogx"),
         logx=True)
    draw(os.path.join(args.out, "decode_vs_prompt." + args.format), "Decode: tokens/s by prompt length (batch 1)",
         "prompt length (tokens before decoding; llama.cpp tg128: 0)", "tokens/s",
         series(rows, "decode_tok_s", "prompt_len", lambda r: r.get("batch", 1) == 1))
    draw(os.path.join(args.out, "prefill_vs_prompt." + args.format), "Prefill: tokens/s by prompt length",
         "prompt length (tokens)", "tokens/s", series(rows, "prefill_tok_s", "prompt_len"), logx=True)


if __name__ == "__main__":
    main()
