"""Independent reference forward pass for the builder's architectures, in plain PyTorch (float64).

Written from the semantics of Hugging Face transformers' modeling code (Llama, Mistral, Qwen2, Qwen3, Phi3,
Gemma2), not from ogx or the builder: RMSNorm (Gemma: x * (1 + w)), rotate-half RoPE (Llama-3 frequency
scaling), grouped-query attention with causal and sliding-window masks (a window of N covers N keys including
the current one, transformers' `kv_idx > q_idx - N`; which layers slide follows transformers' layer_types rules),
Qwen3's per-head q/k norms before RoPE, Qwen2's q/k/v biases, Phi3's fused qkv and gate_up, Gemma2's scaled
embeddings, sandwich norms, attention and final logit soft-capping and gelu-tanh. No KV cache: every position
is computed from the whole prefix, so the cached decode path of ogx is checked too.

Usage:
  torch_reference.py HF_DIR --ids 1,2,3 --out LOGITS.f32 [--from-pos P]
      writes float32 logits [positions P.., vocab] of the given ids
  torch_reference.py --check-goldens SHARED_DIR
      validates this reference against Hugging Face's own logits of the golden models (reference.json)
Needs numpy and torch (Debian: python3-numpy, python3-torch); safetensors are parsed here directly.
"""
import argparse
import json
import math
import struct
import sys

import numpy as np
import torch

torch.set_grad_enabled(False)
DT = torch.float64


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        raw = data[base + b:base + en]
        if e["dtype"] == "F32":
            arr = np.frombuffer(raw, np.float32)
        elif e["dtype"] == "F16":
            arr = np.frombuffer(raw, np.float16).astype(np.float32)
        elif e["dtype"] == "BF16":
            arr = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: tensor {name}: dtype {e['dtype']}")
        out[name] = torch.from_numpy(arr.reshape(e["shape"]).astype(np.float64))
    return out


class Cfg:
    def __init__(self, c):
        self.arch = c["architectures"][0]
        self.gemma = self.arch == "Gemma2ForCausalLM"
        self.H = c["hidden_size"]
        self.nh = c["num_attention_heads"]
        self.nkv = c.get("num_key_value_heads") or self.nh
        self.hd = c.get("head_dim") or self.H // self.nh
        self.L = c["num_hidden_layers"]
        self.eps = c.get("rms_norm_eps", 1e-6)
        rp = c.get("rope_parameters") or {}
        self.theta = rp.get("rope_theta", c.get("rope_theta", 10000.0))
        self.rope_scaling = c.get("rope_scaling") or (rp if rp.get("rope_type", "default") != "default" else None)
        self.tie = c.get("tie_word_embeddings", self.gemma)
        self.act = c.get("hidden_activation") if self.gemma and c.get("hidden_activation") else c.get("hidden_act", "silu")
        self.attn_cap = c.get("attn_logit_softcapping") if self.gemma else None
        self.final_cap = c.get("final_logit_softcapping") if self.gemma else None
        self.scaling = (c["query_pre_attn_scalar"] ** -0.5) if self.gemma else self.hd ** -0.5
        # transformers: Qwen2/Qwen3 keep sliding_window only with use_sliding_window and slide from
        # max_window_layers on; Gemma2 slides on even layers; Mistral and Phi3 on every layer.
        w = c.get("sliding_window")
        if self.arch in ("Qwen2ForCausalLM", "Qwen3ForCausalLM") and not c.get("use_sliding_window", False):
            w = None
        if self.arch == "LlamaForCausalLM":
            w = None
        self.window = w
        if "layer_types" in c:
            self.sliding = [t == "sliding_attention" for t in c["layer_types"]]
        elif w is None:
            self.sliding = [False] * self.L
        elif self.gemma:
            self.sliding = [bool((i + 1) % 2) for i in range(self.L)]
        elif self.arch in ("Qwen2ForCausalLM", "Qwen3ForCausalLM"):
            self.sliding = [i >= c.get("max_window_layers", 28) for i in range(self.L)]
        else:
            self.sliding = [True] * self.L


def inv_freq(cfg):
    f = 1.0 / (cfg.theta ** (torch.arange(0, cfg.hd, 2, dtype=DT) / cfg.hd))
    rs = cfg.rope_scaling
    if rs and rs.get("rope_type", rs.get("type")) == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        wl = 2 * math.pi / f
        scaled = torch.where(wl > low_wl, f / factor, f)
        smooth = (old / wl - lo) / (hi - lo)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wl < high_wl) & ~(wl > low_wl)
        f = torch.where(medium, smoothed, scaled)
    elif rs and rs.get("rope_type", rs.get("type", "default")) != "default":
        raise ValueError(f"rope scaling {rs} not implemented in the reference")
    return f


def rms_norm(x, w, eps, gemma):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * (1.0 + w) if gemma else y * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def act(name, x):
    if name == "silu":
        return x * torch.sigmoid(x)
    if name in ("gelu_pytorch_tanh", "gelu_tanh"):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))
    raise ValueError(f"activation {name} not implemented in the reference")


def forward(cfg, W, ids):
    T = len(ids)
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    if cfg.gemma:
        x = x * float(np.float32(cfg.H ** 0.5))  # transformers: normalizer in the activation dtype (fp32 here)
    pos = torch.arange(T, dtype=DT)
    freqs = torch.outer(pos, inv_freq(cfg))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]  # [T, 1, hd]
    qi = torch.arange(T)[:, None]
    ki = torch.arange(T)[None, :]
    group = cfg.nh // cfg.nkv
    for i in range(cfg.L):
        p = f"model.layers.{i}."
        r = x
        h = rms_norm(x, W[p + "input_layernorm.weight"], cfg.eps, cfg.gemma)
        qn, kn = cfg.nh * cfg.hd, cfg.nkv * cfg.hd
        if cfg.arch == "Phi3ForCausalLM":
            qkv = h @ W[p + "self_attn.qkv_proj.weight"].T
            q, k, v = qkv[:, :qn], qkv[:, qn:qn + kn], qkv[:, qn + kn:]
        else:
            q = h @ W[p + "self_attn.q_proj.weight"].T
            k = h @ W[p + "self_attn.k_proj.weight"].T
            v = h @ W[p + "self_attn.v_proj.weight"].T
            if p + "self_attn.q_proj.bias" in W:
                q = q + W[p + "self_attn.q_proj.bias"]
                k = k + W[p + "self_attn.k_proj.bias"]
                v = v + W[p + "self_attn.v_proj.bias"]
        q, k, v = q.view(T, cfg.nh, cfg.hd), k.view(T, cfg.nkv, cfg.hd), v.view(T, cfg.nkv, cfg.hd)
        if cfg.arch == "Qwen3ForCausalLM":
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], cfg.eps, False)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], cfg.eps, False)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        s = torch.einsum("qhd,khd->hqk", q, k) * cfg.scaling
        if cfg.attn_cap:
            s = torch.tanh(s / cfg.attn_cap) * cfg.attn_cap
        allowed = ki <= qi
        if cfg.sliding[i]:
            allowed = allowed & (ki > qi - cfg.window)
        s = s.masked_fill(~allowed, float("-inf"))
        a = torch.einsum("hqk,khd->qhd", torch.softmax(s, dim=-1), v).reshape(T, qn)
        a = a @ W[p + "self_attn.o_proj.weight"].T
        if cfg.gemma:
            a = rms_norm(a, W[p + "post_attention_layernorm.weight"], cfg.eps, True)
            x = r + a
            h = rms_norm(x, W[p + "pre_feedforward_layernorm.weight"], cfg.eps, True)
        else:
            x = r + a
            h = rms_norm(x, W[p + "post_attention_layernorm.weight"], cfg.eps, False)
        if cfg.arch == "Phi3ForCausalLM":
            gu = h @ W[p + "mlp.gate_up_proj.weight"].T
            g, u = gu.chunk(2, dim=-1)
        else:
            g, u = h @ W[p + "mlp.gate_proj.weight"].T, h @ W[p + "mlp.up_proj.weight"].T
        m = (act(cfg.act, g) * u) @ W[p + "mlp.down_proj.weight"].T
        if cfg.gemma:
            m = rms_norm(m, W[p + "post_feedforward_layernorm.weight"], cfg.eps, True)
        x = x + m
    x = rms_norm(x, W["model.norm.weight"], cfg.eps, cfg.gemma)
    head = W["model.embed_tokens.weight"] if cfg.tie else W["lm_head.weight"]
    logits = x @ head.T
    if cfg.final_cap:
        logits = torch.tanh(logits / cfg.final_cap) * cfg.final_cap
    return logits


def load(hf_dir):
    with open(f"{hf_dir}/config.json") as f:
        cfg = Cfg(json.load(f))
    return cfg, load_safetensors(f"{hf_dir}/model.safetensors")


def check_goldens(shared):
    worst_all = 0.0
    for m in ("llama", "qwen2", "phi3"):
        base = f"{shared}/golden/models/{m}"
        cfg, W = load(f"{base}/hf")
        with open(f"{base}/reference.json") as f:
            ref = json.load(f)
        for c in ref["cases"]:
            hf = np.fromfile(f"{base}/{c['last_logits_file']}", dtype=np.float32)
            ours = forward(cfg, W, c["prompt"])[-1].numpy()
            d = float(np.abs(ours - hf).max())
            # greedy tokens of the whole reference sequence (teacher forcing = one pass over prompt + greedy)
            seq = c["prompt"] + c["greedy"]
            lg = forward(cfg, W, seq[:-1])[len(c["prompt"]) - 1:]
            ok = lg.argmax(-1).tolist() == c["greedy"]
            print(f"{m} prompt len {len(c['prompt'])}: max |ref - HF| last logits = {d:.3g}, greedy tokens equal: {ok}")
            worst_all = max(worst_all, d)
            if not ok or d > 1e-4:
                return 1
    print(f"torch_reference agrees with Hugging Face on the goldens (max last-logit diff {worst_all:.3g})")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hf_dir", nargs="?")
    ap.add_argument("--ids")
    ap.add_argument("--out")
    ap.add_argument("--from-pos", type=int, default=0)
    ap.add_argument("--check-goldens")
    a = ap.parse_args()
    if a.check_goldens:
        return check_goldens(a.check_goldens)
    cfg, W = load(a.hf_dir)
    ids = [int(t) for t in a.ids.split(",")]
    logits = forward(cfg, W, ids)[a.from_pos:]
    logits.numpy().astype(np.float32).tofile(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
