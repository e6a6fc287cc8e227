#!/usr/bin/env python3
"""Trains ogx's default model: a small Llama (LlamaForCausalLM layout, tied embeddings, GQA) on the token ids that
tools/train/prepare_corpus.py wrote, and exports it as a Hugging Face folder that `ogx build` converts.

Several regularisation variants (dropout, epochs) of the same architecture train in lockstep in one process; the
one with the lowest held-out loss (evaluated every --eval-every steps, best snapshot kept) is exported. The step
count of each variant is fixed after a short timing phase so that all fit in --budget-s seconds of wall clock; the
chosen numbers are printed and written to metrics.json, and `--steps-scale` replays them exactly.

Outputs in --out:
  hf/config.json, hf/model.safetensors.index.json, hf/model-0000N-of-00002.safetensors
      (fp16; the final weights ARE the fp16-rounded ones: held-out numbers and reference logits use them);
      tools/train/export.sh adds the tokenizer and generation settings and runs `ogx build`
  reference_logits.bin / reference.json: fp32 CPU forward pass (training code's model) on fixed prompts:
      the logits after the prompt and after each of --ref-steps greedy tokens (teacher-forced)
  metrics.json, train.log

Usage (the exact command of the committed model is in models/ogx-debian-10m/README.md):
  python3 tools/train/train.py --data .train/data --out OUT [--budget-s 330] [--seed 1234]
"""
import argparse
import copy
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ARCH = dict(hidden_size=384, intermediate_size=960, num_hidden_layers=6, num_attention_heads=6,
            num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-5, rope_theta=10000.0)
# (dropout, epochs) per variant.
VARIANTS = [(0.0, 6), (0.1, 16), (0.2, 32), (0.2, 60)]


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dt)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, self.h, self.kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = d // self.h
        self.q_proj = nn.Linear(d, self.h * self.hd, bias=False)
        self.k_proj = nn.Linear(d, self.kv * self.hd, bias=False)
        self.v_proj = nn.Linear(d, self.kv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.h * self.hd, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # torch < 2.0
            s = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            y = s.masked_fill(~mask, float("-inf")).softmax(-1).to(v.dtype) @ v
        return self.o_proj(y.transpose(1, 2).reshape(B, T, self.h * self.hd))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, f = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, c, dropout):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.mlp = MLP(c)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, cos, sin):
        x = x + self.drop(self.self_attn(self.input_layernorm(x), cos, sin))
        return x + self.drop(self.mlp(self.post_attention_layernorm(x)))


class Inner(nn.Module):
    def __init__(self, c, dropout):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Layer(c, dropout) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])


class Llama(nn.Module):
    """LlamaForCausalLM's computation and parameter names (model.*), lm_head tied to model.embed_tokens."""

    def __init__(self, c, dropout=0.0):
        super().__init__()
        self.c = c
        self.model = Inner(c, dropout)
        self.drop = nn.Dropout(dropout)
        hd = c["hidden_size"] // c["num_attention_heads"]
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        self.register_buffer("inv_freq", inv, persistent=False)
        std = 0.02
        for n, p in self.named_parameters():
            if p.dim() == 2:
                s = std / math.sqrt(2 * c["num_hidden_layers"]) if n.endswith(("o_proj.weight", "down_proj.weight")) else std
                nn.init.normal_(p, 0.0, s)

    def forward(self, ids):
        T = ids.shape[1]
        pos = torch.arange(T, device=ids.device, dtype=torch.float32)
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.drop(self.model.embed_tokens(ids))
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        x = self.model.norm(x)
        return F.linear(x, self.model.embed_tokens.weight)


def log(msg, f=None):
    print(msg, flush=True)
    if f:
        f.write(msg + "\n")
        f.flush()


@torch.no_grad()
def evaluate(model, val, seq, dev, bos_id):
    """Mean NLL (nats/token) over non-overlapping seq-token windows of the held-out ids; <s> targets excluded."""
    model.eval()
    n = (len(val) - 1) // seq
    x = val[: n * seq].view(n, seq)
    y = val[1: n * seq + 1].view(n, seq)
    tot, cnt = 0.0, 0
    for i in range(0, n, 32):
        xb, yb = x[i:i + 32].to(dev), y[i:i + 32].to(dev)
        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = model(xb)
        nll = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), yb.reshape(-1), reduction="none")
        keep = yb.reshape(-1) != bos_id
        tot += nll[keep].sum().item()
        cnt += keep.sum().item()
    model.train()
    return tot / cnt, cnt


def write_safetensors_shards(sd, folder, nshards=2):
    """Writes fp16 tensors as nshards safetensors files + model.safetensors.index.json (by hand: 8-byte LE header
    length, JSON header, raw data), keeping each file under the device tool's 16 MiB transfer limit."""
    names = sorted(sd)
    total = sum(sd[n].numel() * 2 for n in names)
    groups, cur, size = [[] for _ in range(nshards)], 0, 0
    for n in names:
        if size > (cur + 1) * total / nshards and cur < nshards - 1:
            cur += 1
        groups[cur].append(n)
        size += sd[n].numel() * 2
    weight_map = {}
    for i, g in enumerate(groups):
        fname = f"model-{i + 1:05d}-of-{nshards:05d}.safetensors"
        header, blobs, off = {}, [], 0
        for n in g:
            b = sd[n].detach().to("cpu", torch.float16).contiguous().numpy().tobytes()
            header[n] = {"dtype": "F16", "shape": list(sd[n].shape), "data_offsets": [off, off + len(b)]}
            blobs.append(b)
            off += len(b)
            weight_map[n] = fname
        h = json.dumps(header, separators=(",", ":")).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        with open(os.path.join(folder, fname), "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for b in blobs:
                f.write(b)
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".train/data")
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=330.0, help="wall clock for the training loop")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--steps-scale", type=float, default=0.0, help="replay: fraction of each variant's steps "
                    "(0: choose from the measured step time)")
    ap.add_argument("--variants", default="", help="subset of variant indices, e.g. 0,2 (default: all)")
    ap.add_argument("--ref-steps", type=int, default=8)
    ap.add_argument("--tiny", action="store_true", help="CPU smoke test: a 2-layer 64-wide model")
    args = ap.parse_args()

    t_start = time.time()
    os.makedirs(os.path.join(args.out, "hf"), exist_ok=True)
    logf = open(os.path.join(args.out, "train.log"), "w")
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    meta = json.load(open(os.path.join(args.data, "corpus.json")))
    cfg = dict(ARCH, vocab_size=meta["vocab_size"])
    if args.tiny:
        cfg.update(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2)
    train = torch.from_numpy(np.fromfile(os.path.join(args.data, "train.bin"), dtype=np.uint16).astype(np.int64))
    val = torch.from_numpy(np.fromfile(os.path.join(args.data, "val.bin"), dtype=np.uint16).astype(np.int64))
    train_dev = train.to(dev)
    log(f"device {dev} {torch.cuda.get_device_name() if dev.type == 'cuda' else ''} torch {torch.__version__}; "
        f"train {len(train)} tokens, held-out {len(val)}", logf)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    variants = VARIANTS if not args.variants else [VARIANTS[int(i)] for i in args.variants.split(",")]
    runs = []
    for vi, (dropout, epochs) in enumerate(variants):
        torch.manual_seed(args.seed)  # same initial weights for every variant
        m = Llama(cfg, dropout).to(dev)
        decay = [p for p in m.parameters() if p.dim() == 2]
        no_decay = [p for p in m.parameters() if p.dim() < 2]
        kw = {"fused": True} if dev.type == "cuda" else {}
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=args.lr, betas=(0.9, 0.95), eps=1e-8, **kw)
        steps = int(epochs * len(train) / (args.batch * args.seq))
        runs.append(dict(i=vi, dropout=dropout, epochs=epochs, model=m, opt=opt, steps=steps, best=float("inf"),
                         best_step=-1, best_sd=None, gen=torch.Generator(device=dev).manual_seed(args.seed + vi),
                         history=[]))
    nparams = sum(p.numel() for p in runs[0]["model"].parameters())
    log(f"config {json.dumps(cfg)}; parameters {nparams} (tied embeddings)", logf)

    def lr_at(step, total):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = min(1.0, (step - args.warmup) / max(1, total - args.warmup))
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))

    def train_step(r, step):
        m, opt = r["model"], r["opt"]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, r["steps"])
        ix = torch.randint(0, len(train_dev) - args.seq - 1, (args.batch,), device=dev, generator=r["gen"])
        off = torch.arange(args.seq + 1, device=dev)
        chunk = train_dev[ix[:, None] + off[None, :]]
        x, y = chunk[:, :-1], chunk[:, 1:]
        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = m(x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss

    def do_eval(r, step):
        v, _ = evaluate(r["model"], val, args.seq, dev, 1)
        r["history"].append([step, round(v, 4)])
        if v < r["best"]:
            r["best"], r["best_step"] = v, step
            r["best_sd"] = {k: t.detach().clone() for k, t in r["model"].state_dict().items()}
        log(f"  variant {r['i']} (dropout {r['dropout']}, {r['epochs']} ep) step {step}/{r['steps']}: held-out "
            f"loss {v:.4f} ppl {math.exp(v):.2f} (best {math.exp(r['best']):.2f} @ {r['best_step']}) "
            f"[{time.time() - t_start:.0f} s]", logf)

    # Timing phase: a few steps of every variant, then fix the step counts to fit the budget.
    t_loop = time.time()
    probe = 20
    for step in range(probe):
        for r in runs:
            loss = train_step(r, step)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    per_round = (time.time() - t_loop) / probe  # seconds for one step of every variant
    sec_per_step = per_round / len(runs)
    eval_cost = 0.0
    t_e = time.time()
    evaluate(runs[0]["model"], val, args.seq, dev, 1)
    eval_cost = time.time() - t_e
    want = sum(r["steps"] for r in runs)
    n_evals = sum(r["steps"] // args.eval_every + 1 for r in runs)
    avail = args.budget_s - (time.time() - t_loop) - n_evals * eval_cost
    scale = args.steps_scale if args.steps_scale > 0 else max(0.01, min(1.0, avail / (want * sec_per_step)))
    for r in runs:
        r["steps"] = max(probe + 1, int(r["steps"] * scale))
    log(f"timing: {sec_per_step * 1000:.1f} ms/step/variant, eval {eval_cost:.2f} s; steps scale {scale:.4f}; "
        f"steps {[r['steps'] for r in runs]} ({args.batch}x{args.seq} tokens each)", logf)

    deadline = t_loop + args.budget_s
    step = probe
    stopped_early = False
    while any(step < r["steps"] for r in runs):
        if time.time() > deadline:
            stopped_early = True
            log(f"wall-clock budget reached at step {step}: stopping", logf)
            break
        for r in runs:
            if step < r["steps"]:
                loss = train_step(r, step)
                if (step + 1) % args.eval_every == 0 or step + 1 == r["steps"]:
                    log(f"  variant {r['i']} train loss {loss.item():.4f}", logf)
                    do_eval(r, step + 1)
        step += 1
    for r in runs:
        if not r["history"] or r["history"][-1][0] != min(step, r["steps"]):
            do_eval(r, min(step, r["steps"]))
    train_s = time.time() - t_loop

    best = min(runs, key=lambda r: r["best"])
    log(f"chosen: variant {best['i']} (dropout {best['dropout']}, {best['epochs']} epochs planned), best held-out "
        f"at step {best['best_step']} of {best['steps']}", logf)

    # Final weights: the chosen snapshot rounded to fp16 (what the fp16 folder stores exactly).
    final = Llama(cfg, 0.0)
    sd = {k: v.to("cpu").half().float() for k, v in best["best_sd"].items()}
    final.load_state_dict(sd)
    final.eval()
    v_loss, v_tokens = evaluate(final.to(dev), val, args.seq, dev, 1)
    final = final.to("cpu").float()
    torch.backends.cuda.matmul.allow_tf32 = False
    bpc = v_loss * v_tokens / math.log(2) / meta["held_out_chars"]
    log(f"final (fp16-rounded weights): held-out loss {v_loss:.4f} nats/token, perplexity {math.exp(v_loss):.2f} over "
        f"{v_tokens} tokens, {bpc:.3f} bits/char", logf)

    # Hugging Face folder.
    hf = os.path.join(args.out, "hf")
    export = {k: v for k, v in final.state_dict().items()}
    write_safetensors_shards(export, hf)
    hf_cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
              "vocab_size": cfg["vocab_size"], "hidden_size": cfg["hidden_size"],
              "intermediate_size": cfg["intermediate_size"], "num_hidden_layers": cfg["num_hidden_layers"],
              "num_attention_heads": cfg["num_attention_heads"], "num_key_value_heads": cfg["num_key_value_heads"],
              "head_dim": cfg["hidden_size"] // cfg["num_attention_heads"],
              "max_position_embeddings": cfg["max_position_embeddings"], "rms_norm_eps": cfg["rms_norm_eps"],
              "rope_theta": cfg["rope_theta"], "tie_word_embeddings": True, "attention_bias": False,
              "mlp_bias": False, "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float16"}
    json.dump(hf_cfg, open(os.path.join(hf, "config.json"), "w"), indent=2)

    # Reference logits: fp32 on the CPU, the prompt then --ref-steps greedy tokens, all teacher-forced.
    prompts = json.load(open(os.path.join(args.data, "prompts.json")))
    cases, rows = [], []
    with torch.no_grad():
        for p in prompts:
            ids = list(p)
            cont = []
            for s in range(args.ref_steps + 1):
                lg = final(torch.tensor([ids]))[0, -1].float()
                rows.append(lg.numpy().astype("<f4"))
                if s == args.ref_steps:
                    break
                nxt = int(lg.argmax())
                cont.append(nxt)
                ids.append(nxt)
            cases.append({"prompt": p, "continuation": cont})
    np.stack(rows).tofile(os.path.join(args.out, "reference_logits.bin"))
    ref = {"what": "fp32 CPU logits of tools/train/train.py's Llama on the fp16-rounded final weights",
           "vocab_size": cfg["vocab_size"], "steps_per_case": args.ref_steps + 1,
           "layout": "reference_logits.bin: float32 little-endian [cases x steps_per_case x vocab]; row s of a case "
                     "is the logits after prompt + continuation[:s]",
           "cases": cases}
    json.dump(ref, open(os.path.join(args.out, "reference.json"), "w"), indent=1)

    # Cross-check against transformers' LlamaForCausalLM on the exported folder, when it is installed.
    hf_check = None
    try:
        from transformers import LlamaForCausalLM
        hm = LlamaForCausalLM.from_pretrained(hf, torch_dtype=torch.float32).eval()
        with torch.no_grad():
            ids = torch.tensor([prompts[-1]])
            a, b = hm(ids).logits[0], final(ids)[0]
        hf_check = float((a - b).abs().max())
        log(f"transformers LlamaForCausalLM vs this model, max |logit diff| = {hf_check:.3e}", logf)
    except Exception as e:  # noqa: BLE001
        log(f"transformers cross-check skipped: {type(e).__name__}: {e}", logf)

    metrics = {"parameters": nparams, "config": cfg, "seed": args.seed, "batch": args.batch, "seq": args.seq,
               "lr": args.lr, "warmup": args.warmup, "steps_scale": scale, "stopped_early": stopped_early,
               "train_loop_s": round(train_s, 1), "ms_per_step_per_variant": round(sec_per_step * 1000, 2),
               "device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", "torch": torch.__version__,
               "variants": [{"index": r["i"], "dropout": r["dropout"], "epochs_planned": r["epochs"],
                             "steps": r["steps"], "best_step": r["best_step"], "best_loss": round(r["best"], 4),
                             "history": r["history"]} for r in runs],
               "chosen_variant": best["i"], "chosen_step": best["best_step"],
               "held_out_loss": round(v_loss, 5), "held_out_ppl": round(math.exp(v_loss), 3),
               "held_out_tokens": v_tokens, "held_out_bits_per_char": round(bpc, 4),
               "transformers_max_abs_diff": hf_check, "total_s": round(time.time() - t_start, 1)}
    json.dump(metrics, open(os.path.join(args.out, "metrics.json"), "w"), indent=1)

    # A taste of the model (PyTorch sampling; the model card's samples come from ogx).
    g = torch.Generator().manual_seed(args.seed)
    with torch.no_grad():
        for p in prompts[:3]:
            ids = list(p)
            for _ in range(40):
                lg = final(torch.tensor([ids[-cfg["max_position_embeddings"]:]]))[0, -1] / 0.8
                nxt = int(torch.multinomial(lg.softmax(-1), 1, generator=g))
                if nxt == 2:
                    break
                ids.append(nxt)
            log(f"sample ids: {ids}", logf)
    log(f"done in {time.time() - t_start:.0f} s", logf)


if __name__ == "__main__":
    sys.exit(main())
