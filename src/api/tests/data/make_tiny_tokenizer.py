#!/usr/bin/env python3
"""Writes tiny-tokenizer/: a byte-level BPE tokenizer (tokenizer.json + tokenizer_config.json) whose vocabulary is
exactly 2048 ids, the vocabulary of the golden test models, so every id such a model generates decodes.

ids 0-2: <unk> <s> </s>; 3-6: chat markers <|system|> <|user|> <|assistant|> <|end|>; 7-262: the 256 bytes;
263-2047: merges learned from this script's own English corpus (deterministic: ties broken by the pair).
Run with any Python 3: python3 make_tiny_tokenizer.py (the output is committed).
"""
import collections
import json
import os
import re

VOCAB_SIZE = 2048
SPECIALS = ["<unk>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]

CORPUS = """
The quick brown fox jumps over the lazy dog. A model folder holds a configuration, a graph and its weights.
Language models predict the next token from the tokens before it; a tokenizer turns text into tokens and back.
What is the capital of France? Paris is the capital of France. How many legs does a spider have? Eight.
Tell me a short story about a robot who learns to paint. Once upon a time there was a small robot named Pip.
Pip lived in a quiet workshop at the edge of a busy city, where the streets were full of people and noise.
Every morning the sun rose over the hills, and every evening the lights of the city came on one by one.
Please explain how a computer adds two numbers. The processor reads both values from memory, adds them in an
arithmetic unit, and writes the result back. Generation runs the model once for the prompt and then once per
new token, keeping the keys and values of earlier positions in a cache so that each step is fast.
Hello! How are you today? I am fine, thank you. Can you help me write a letter to my friend?
Of course. Dear friend, I hope this letter finds you well. It has been a long time since we last spoke.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 12 16 32 64 128 256 512 1024 2048 4096. Dates like 2024-05-01 and times 12:30.
Code: def main(): print("hello, world") return 0; for i in range(10): total += i; if x > y: swap(x, y).
Questions and answers, instructions and responses, system prompts and user turns all become token ids.
The weather today is sunny with a light breeze from the west; tomorrow it will rain in the afternoon.
Water boils at one hundred degrees at sea level. The earth goes around the sun once every year.
Music, art, science, history, mathematics, geography, literature and sport are subjects taught at school.
"""
# Every letter pair (lowercase, and capital + lowercase), alone and after a space, and every two-digit number:
# enough pairs to fill the vocabulary once the corpus's own frequent pairs are merged.
LOWER = "abcdefghijklmnopqrstuvwxyz"
PAIRS = [a + b for a in LOWER + LOWER.upper() for b in LOWER] + [a + b for a in "0123456789" for b in "0123456789"]
SYNTHETIC = " " + " ".join(PAIRS) + " " + "".join(p + " " for p in PAIRS)


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def main():
    b2u = bytes_to_unicode()
    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for b in range(256):
        vocab[b2u[b]] = len(vocab)
    words = collections.Counter(re.findall(r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+", CORPUS + SYNTHETIC))
    splits = {w: [b2u[b] for b in w.encode("utf-8")] for w in words}
    merges = []
    while len(vocab) < VOCAB_SIZE:
        pairs = collections.Counter()
        for w, count in words.items():
            s = splits[w]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += count
        if not pairs:
            raise SystemExit("corpus too small for %d merges" % (VOCAB_SIZE - len(vocab)))
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merged = best[0] + best[1]
        merges.append(best[0] + " " + best[1])
        vocab[merged] = len(vocab)
        for w in splits:
            s, out, i = splits[w], [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            splits[w] = out

    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in enumerate(SPECIALS)]
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}},
        },
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    template = ("{{ bos_token }}{% for message in messages %}"
                "{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}"
                "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}")
    config = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "</s>", "unk_token": "<unk>",
              "add_bos_token": True, "add_eos_token": False, "model_max_length": 4096,
              "tokenizer_class": "PreTrainedTokenizerFast", "chat_template": template}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny-tokenizer")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)
        f.write("\n")
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=2)
        f.write("\n")
    print("wrote %d ids (%d merges) to %s" % (len(vocab), len(merges), out))


if __name__ == "__main__":
    main()
