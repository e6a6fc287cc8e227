#!/usr/bin/env bash
# Regenerates the fuzz seed corpora under fuzz/corpus/<target>/ from ../shared (golden models and tokenizers) and
# the chat-template test data. Seeds are kept small (libFuzzer mutates small inputs fastest): tokenizers are cut to
# their first 400 vocabulary entries, model files to their first 16 KiB of external data. The output is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${OGX_SHARED_DIR:-../shared}
[ -d "$shared/golden" ] || { echo "fuzz-seeds: $shared/golden is absent: nothing to do"; exit 0; }
python3 - "$shared" <<'PY'
import json, lzma, os, struct, sys, glob
shared = sys.argv[1]
out = "fuzz/corpus"
def put(target, name, data):
    d = os.path.join(out, target); os.makedirs(d, exist_ok=True)
    if isinstance(data, str): data = data.encode()
    open(os.path.join(d, name), "wb").write(data)

# ONNX loader: 4-byte model length, model.onnx, the first 16 KiB of model.onnx.data.
for m in sorted(glob.glob(f"{shared}/golden/models/*/*/model.onnx")):
    tag = "_".join(m.split("/")[-3:-1])
    model = open(m, "rb").read()
    data = open(m + ".data", "rb").read(16384) if os.path.exists(m + ".data") else b""
    put("fuzz_onnx_loader", tag, struct.pack("<I", len(model)) + model + data)

# genai_config.json, alone and with an overlay after a NUL.
for c in sorted(glob.glob(f"{shared}/golden/models/*/*/genai_config.json")):
    tag = "_".join(c.split("/")[-3:-1])
    text = open(c).read()
    put("fuzz_genai_config", tag, text)
    put("fuzz_genai_config", tag + "_overlay", text + "\0" + '{"search": {"max_length": 64, "top_k": 5}}')

# tokenizer.json cut to 400 vocabulary entries (merges whose parts and result stay), + tokenizer_config + text.
for t in sorted(glob.glob(f"{shared}/golden/tokenizers/*/tokenizer.json.xz")):
    name = t.split("/")[-2]
    j = json.loads(lzma.open(t).read())
    m = j["model"]
    if m.get("type") == "BPE":
        keep = dict(sorted(m["vocab"].items(), key=lambda kv: kv[1])[:400])
        m["vocab"] = keep
        def parts(x): return x.split(" ", 1) if isinstance(x, str) else x
        m["merges"] = [x for x in m["merges"] if all(p in keep for p in parts(x)) and "".join(parts(x)) in keep][:400]
    elif m.get("type") == "Unigram":
        m["vocab"] = m["vocab"][:400]
    j["added_tokens"] = j.get("added_tokens", [])[:8]
    cfg_path = os.path.join(os.path.dirname(t), "tokenizer_config.json")
    cfg = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {}
    cfg.pop("added_tokens_decoder", None)
    cfg.pop("chat_template", None)
    put("fuzz_tokenizer", name, json.dumps(j) + "\0" + json.dumps(cfg) + "\0" + "Hello, world! 123 \u4f60\u597d <s>")

# Chat templates: each template of the golden tokenizers and the template tests, with a short conversation.
msgs = json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "2+2?"}])
for c in sorted(glob.glob(f"{shared}/golden/tokenizers/*/tokenizer_config.json")):
    tmpl = json.load(open(c)).get("chat_template")
    if isinstance(tmpl, str) and len(tmpl) < 20000:
        put("fuzz_chat_template", c.split("/")[-2], tmpl + "\0" + msgs)
for t in sorted(glob.glob("src/genai/chat_template/tests/data/templates/*.jinja")):
    tmpl = open(t).read()
    if len(tmpl) < 8000:
        put("fuzz_chat_template", os.path.basename(t)[:-6], tmpl + "\0" + msgs)

# safetensors: a small checkpoint of each header style (F32, F16, BF16; 1-D, 2-D, empty, metadata).
def st(tensors, meta=None):
    h, blob = {}, b""
    if meta: h["__metadata__"] = meta
    for name, dt, shape in tensors:
        n = 1
        for d in shape: n *= d
        size = n * (4 if dt == "F32" else 2)
        h[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(blob), len(blob) + size]}
        blob += bytes((i * 7) % 251 for i in range(size))
    hs = json.dumps(h).encode()
    hs += b" " * ((8 - len(hs) % 8) % 8)
    return struct.pack("<Q", len(hs)) + hs + blob
put("fuzz_safetensors", "f32_2d", st([("model.embed_tokens.weight", "F32", [8, 4]), ("norm.weight", "F32", [4])]))
put("fuzz_safetensors", "f16_bf16", st([("a", "F16", [3, 5]), ("b", "BF16", [2, 2, 2])], {"format": "pt"}))
put("fuzz_safetensors", "empty", st([("z", "F32", [0, 4]), ("s", "F32", [])]))

# C API programs: option sets, a generator, appends, a generation, a rewind, sequences, tensors.
def prog(*ops): return b"".join(ops)
def num(v, k): return bytes([0]) + struct.pack("<d", v) + bytes([k])
put("fuzz_c_api", "options", prog(num(16, 0), num(0.5, 3), num(0.7, 4), num(5, 2), bytes([1, 0x80]), num(2**40, 7)))
put("fuzz_c_api", "generate", prog(num(12, 0), bytes([2]), bytes([3, 3]) + struct.pack("<8i", 1, 2, 3, 0, 0, 0, 0, 0),
                                    bytes([4]), bytes([4]), bytes([5]) + struct.pack("<Q", 2), bytes([4])))
put("fuzz_c_api", "sequences", prog(bytes([6]) + struct.pack("<4i", 1, 5, 9, 2) + bytes([3]), bytes([2]), bytes([7]),
                                     bytes([8]) + struct.pack("<3q", 2, 3, 4) + bytes([3 | (1 << 2)])))
PY
for d in fuzz/corpus/*/; do echo "$d: $(ls "$d" | wc -l) seeds, $(du -sh "$d" | cut -f1)"; done
