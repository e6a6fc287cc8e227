#!/usr/bin/env python3
"""Builds the training corpus of ogx's default model from Debian packages, trains its tokenizer, and writes the
token ids (uint16) of a train and a held-out split.

Sources (each package's /usr/share/doc/PKG/copyright was read; the licences are recorded in the model card):
  bible-kjv-text  King James Version (1611), public domain; extracted with the `bible` program (package bible-kjv)
  dict-devil      Ambrose Bierce, The Devil's Dictionary (1911), public domain
  dict-jargon     The Jargon File 4.4.7, public domain
  fortunes        BSD fortune(6) cookie files, BSD licence as Debian distributes them; files of song lyrics,
                  comic strips, TV/novel quotations and the ethnic/drugs/men-women files are left out

Documents: one Bible chapter, one dictionary entry, or one fortune. Every 50th document of each source (in a
fixed order) is held out. Tokenizer: SentencePiece BPE (Llama-2 style: byte fallback, identity normalization,
dummy prefix, split digits) trained on the train split only. Each document is encoded as <s> ids </s>.

Usage (Debian: apt-get install bible-kjv bible-kjv-text dict-devil dict-jargon fortunes python3-sentencepiece):
  /usr/bin/python3 tools/train/prepare_corpus.py --out .train/data [--vocab 4096]
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys

import numpy as np
import sentencepiece as spm

FORTUNE_DIR = "/usr/share/games/fortunes"
FORTUNE_SKIP = {"ascii-art", "ethnic", "drugs", "men-women", "pratchett", "startrek", "zippy", "songs-poems"}
HOLDOUT_EVERY = 50
PARITY_PROMPTS = ["In the beginning", "LAWYER, n.", "The best way to predict the future is"]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def clean(text):
    text = text.replace("\r", "").replace("\t", "    ")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def reflow(text):
    """Joins the hard-wrapped lines of each paragraph (blank-line separated) into one line."""
    paras = [" ".join(l.strip() for l in p.split("\n") if l.strip()) for p in re.split(r"\n\s*\n", text)]
    return "\n".join(p for p in paras if p)


def bible_chapters():
    out = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True, capture_output=True, text=True).stdout
    chapters, key = [], None
    for line in out.split("\n"):
        m = re.match(r"^(\w+?)(\d+):(\d+) (.*)$", line)
        if not m:
            continue
        k = (m.group(1), m.group(2))
        if k != key:
            chapters.append([])
            key = k
        chapters[-1].append(m.group(4).strip())
    return ["\n".join(vs) for vs in chapters]


def b64(s):
    n = 0
    for c in s:
        n = n * 64 + B64.index(c)
    return n


def dict_entries(name):
    data = gzip.open(f"/usr/share/dictd/{name}.dict.dz").read()
    spans = set()
    with open(f"/usr/share/dictd/{name}.index", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and not parts[0].startswith("00database"):
                spans.add((b64(parts[1]), b64(parts[2])))
    entries = []
    for off, ln in sorted(spans):
        text = data[off:off + ln].decode("utf-8", errors="replace")
        text = reflow(clean(text))
        if len(text) > 40:
            entries.append(text)
    return entries


def fortunes():
    docs = []
    for name in sorted(os.listdir(FORTUNE_DIR)):
        path = os.path.join(FORTUNE_DIR, name)
        if "." in name or name in FORTUNE_SKIP or not os.path.isfile(path):
            continue
        raw = open(path, "rb").read().decode("utf-8", errors="replace")
        for cookie in re.split(r"\n%\n", raw):
            c = clean(cookie.strip("%\n"))
            if len(c) > 20:
                docs.append(c)
    return docs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".train/data")
    ap.add_argument("--vocab", type=int, default=4096)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    sources = {"bible-kjv-text": bible_chapters(), "dict-devil": dict_entries("devil"),
               "dict-jargon": dict_entries("jargon"), "fortunes": fortunes()}
    train, held = [], []
    stats = {}
    for src, docs in sources.items():
        tr = [d for i, d in enumerate(docs) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
        he = [d for i, d in enumerate(docs) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
        train += [(src, d) for d in tr]
        held += [(src, d) for d in he]
        stats[src] = {"documents": len(docs), "chars": sum(len(d) for d in docs), "held_out_documents": len(he),
                      "held_out_chars": sum(len(d) for d in he)}

    # Tokenizer: trained on the train split; SentencePiece reads one sentence per line.
    sp_input = os.path.join(args.out, "tokenizer_train.txt")
    with open(sp_input, "w", encoding="utf-8") as f:
        for _, d in train:
            for line in d.split("\n"):
                if line.strip():
                    f.write(line + "\n")
    prefix = os.path.join(args.out, "tokenizer")
    spm.SentencePieceTrainer.train(
        input=sp_input, model_prefix=prefix, model_type="bpe", vocab_size=args.vocab, character_coverage=0.9999,
        byte_fallback=True, split_digits=True, add_dummy_prefix=True, normalization_rule_name="identity",
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, max_sentence_length=16384,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=2, input_sentence_size=0, shuffle_input_sentence=False,
        minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")

    def encode(docs, name):
        ids = []
        per_src = {}
        for src, d in docs:
            t = sp.encode(d)
            per_src[src] = per_src.get(src, 0) + len(t) + 2
            ids += [sp.bos_id()] + t + [sp.eos_id()]
        arr = np.array(ids, dtype=np.uint16)
        arr.tofile(os.path.join(args.out, name + ".bin"))
        return len(arr), per_src

    n_train, src_train = encode(train, "train")
    n_held, src_held = encode(held, "val")
    for src in stats:
        stats[src]["train_tokens"] = src_train.get(src, 0)
        stats[src]["held_out_tokens"] = src_held.get(src, 0)
    # Parity prompts (token ids with <s>): short ones of each style and a 64-token held-out Bible passage.
    prompts = [[sp.bos_id()] + sp.encode(t) for t in PARITY_PROMPTS]
    prompts.append([sp.bos_id()] + sp.encode(held[0][1])[:63])
    with open(os.path.join(args.out, "prompts.json"), "w") as f:
        json.dump(prompts, f)
    meta = {"vocab_size": sp.get_piece_size(), "train_tokens": n_train, "held_out_tokens": n_held,
            "held_out_chars": sum(len(d) for _, d in held),
            "held_out_rule": f"every {HOLDOUT_EVERY}th document of each source", "sources": stats}
    with open(os.path.join(args.out, "corpus.json"), "w") as f:
        json.dump(meta, f, indent=2)
    os.remove(sp_input)
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    sys.exit(main())
