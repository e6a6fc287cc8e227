"""LoRA adapters through onnxruntime_genai's Python API (og.Adapters, Generator.set_active_adapter) on a random
llama built here with `ogx build --adapter` (no ../shared needed): tokens with the adapter equal the merged-weights
model's, without it the base model's; unloading an adapter in use raises; bad files raise naming the file."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import ogx as og

REPO = pathlib.Path(__file__).resolve().parents[4]
PROMPT = [1, 17, 93, 5, 200, 41, 8]
N = 10


def _ogx_build():
    tool = os.environ.get("OGX_BUILD_TOOL") or str(REPO / "build" / "src" / "builder" / "ogx_build")
    if not os.access(tool, os.X_OK):
        pytest.skip("ogx_build is absent (set OGX_BUILD_TOOL): test skipped")
    return tool


def _tiny_llama(d, vocab):
    """Writes d/config.json, a 2-layer llama shape with `vocab` ids, and returns a function running ogx_build."""
    tool = _ogx_build()
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": vocab,
           "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "bos_token_id": 1, "eos_token_id": 2,
           "hidden_act": "silu"}
    (d / "config.json").write_text(json.dumps(cfg))

    def build(*args):
        subprocess.run([tool, *args], check=True, stdout=subprocess.DEVNULL)

    return build


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    d = tmp_path_factory.mktemp("lora")
    build = _tiny_llama(d, 256)
    build("--config", str(d / "config.json"), "--save-hf", str(d / "hf"), "--init-std", "0.1")
    build("--config", str(d / "config.json"), "--save-lora", str(d / "tuned"), "--init-std", "0.1")
    build("-i", str(d / "hf"), "-o", str(d / "model"), "-p", "fp32", "-e", "cpu", "--adapter", str(d / "tuned"))
    build("-i", str(d / "hf"), "-o", str(d / "merged"), "-p", "fp32", "-e", "cpu", "--adapter", str(d / "tuned"),
          "--merge-adapter")
    build("-i", str(d / "hf"), "-o", str(d / "base"), "-p", "fp32", "-e", "cpu")
    return d


def greedy(model, adapters=None, name=None):
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(PROMPT) + N, min_length=len(PROMPT) + N)
    g = og.Generator(model, params)
    if adapters is not None:
        g.set_active_adapter(adapters, name)
    g.append_tokens(np.array([PROMPT], dtype=np.int32))
    while not g.is_done():
        g.generate_next_token()
    return list(g.get_sequence(0))[len(PROMPT):]


def test_adapter_tokens_equal_merged_model(folders):
    model = og.Model(str(folders / "model"))
    adapters = og.Adapters(model)
    adapters.load(str(folders / "model" / "tuned.onnx_adapter"), "tuned")
    merged = greedy(og.Model(str(folders / "merged")))
    base = greedy(og.Model(str(folders / "base")))
    assert merged != base
    assert greedy(model, adapters, "tuned") == merged
    assert greedy(model) == base  # no adapter active: the zero-rank defaults


def test_unload_in_use_and_bad_files(folders):
    model = og.Model(str(folders / "model"))
    adapters = og.Adapters(model)
    path = str(folders / "model" / "tuned.onnx_adapter")
    adapters.load(path, "a")
    with pytest.raises(og.OgxError, match="already loaded"):
        adapters.load(path, "a")
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(PROMPT) + 2)
    g = og.Generator(model, params)
    g.set_active_adapter(adapters, "a")
    with pytest.raises(og.OgxError, match="in use"):
        adapters.unload("a")
    with pytest.raises(og.OgxError, match="not loaded"):
        g.set_active_adapter(adapters, "missing")
    del g
    adapters.unload("a")
    with pytest.raises(og.OgxError, match="not loaded"):
        adapters.unload("a")
    bad = folders / "bad.onnx_adapter"
    bad.write_bytes(pathlib.Path(path).read_bytes()[:100])
    with pytest.raises(og.OgxError, match="bad.onnx_adapter"):
        adapters.load(str(bad), "bad")
    # An adapter for inputs the model lacks (the base folder has no LoRA inputs).
    with pytest.raises(og.OgxError, match="not an input of the model"):
        og.Adapters(og.Model(str(folders / "base"))).load(path, "x")


def test_engine_requests_with_adapters(served):
    """og.Request.set_active_adapter: requests with two adapters and none in one og.Engine, each with the tokens of a
    generator with that adapter; an unknown adapter raises, and so does a second adapter or one after add_request."""
    model = og.Model(str(served / "model"))
    adapters = og.Adapters(model)
    adapters.load(str(served / "model" / "red.onnx_adapter"), "red")
    adapters.load(str(served / "model_blue" / "blue.onnx_adapter"), "blue")
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(PROMPT) + N, min_length=len(PROMPT) + N)
    want = {name: greedy(model, adapters if name else None, name) for name in ("red", "blue", None)}
    assert want["red"] != want["blue"] != want[None]
    engine = og.Engine(model)
    names = ["red", "blue", None, "red", "blue"]
    requests = []
    for name in names:
        r = og.Request(params)
        if name:
            r.set_active_adapter(adapters, name)
        r.add_tokens(np.array(PROMPT, dtype=np.int32))
        requests.append(r)
    with pytest.raises(og.OgxError, match="already has adapter"):
        requests[0].set_active_adapter(adapters, "blue")
    with pytest.raises(og.OgxError, match="not loaded"):
        og.Request(params).set_active_adapter(adapters, "green")
    for r in requests:
        engine.add_request(r)
    with pytest.raises(og.OgxError, match="already added"):
        requests[2].set_active_adapter(adapters, "red")
    got = {id(r): [] for r in requests}
    while (ready := engine.step()) is not None:
        while ready.has_unseen_tokens():
            got[id(ready)].append(ready.get_unseen_token())
    for name, r in zip(names, requests):
        assert got[id(r)] == want[name], name


def _ogx():
    tool = os.environ.get("OGX_TOOL") or str(REPO / "build" / "tools" / "ogx" / "ogx")
    if not os.access(tool, os.X_OK):
        pytest.skip("the ogx command is absent (set OGX_TOOL): test skipped")
    return tool


def test_ogx_generate_adapter_equals_api(folders):
    """`ogx generate --adapter FILE`: the same tokens as the Python API with that adapter active."""
    path = str(folders / "model" / "tuned.onnx_adapter")
    model = og.Model(str(folders / "model"))
    adapters = og.Adapters(model)
    adapters.load(path, "tuned")
    want, base = greedy(model, adapters, "tuned"), greedy(model)
    assert want != base

    def generate(*extra):
        out = subprocess.run([_ogx(), "generate", str(folders / "model"), "--ids", ",".join(map(str, PROMPT)),
                              "--max-new-tokens", str(N), "--min-new-tokens", str(N), "--greedy", "--json", *extra],
                             check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])["tokens"]

    assert generate("--adapter", path) == want
    assert generate() == base
    bad = subprocess.run([_ogx(), "generate", str(folders / "model"), "--ids", "1,2", "--adapter",
                          str(folders / "missing.onnx_adapter")], capture_output=True, text=True)
    assert bad.returncode != 0 and "missing.onnx_adapter" in bad.stderr


DEFAULT_MODEL = REPO / "models" / "ogx-debian-10m" / "int4"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A random llama with the default model's vocabulary and tokenizer (so that `ogx serve` returns text), built
    with LoRA inputs, and two random adapters for them."""
    d = tmp_path_factory.mktemp("served")
    build = _tiny_llama(d, 4096)
    build("--config", str(d / "config.json"), "--save-hf", str(d / "hf"), "--init-std", "0.1")
    build("--config", str(d / "config.json"), "--save-lora", str(d / "red"), "--init-std", "0.1", "--seed", "5")
    build("--config", str(d / "config.json"), "--save-lora", str(d / "blue"), "--init-std", "0.1", "--seed", "9")
    build("-i", str(d / "hf"), "-o", str(d / "model"), "-p", "fp32", "-e", "cpu", "--adapter", str(d / "red"))
    build("-i", str(d / "hf"), "-o", str(d / "model_blue"), "-p", "fp32", "-e", "cpu", "--adapter", str(d / "blue"))
    for f in ("tokenizer.model", "tokenizer_config.json"):
        (d / "model" / f).write_bytes((DEFAULT_MODEL / f).read_bytes())
    return d


def test_ogx_chat_adapter(served):
    """`ogx chat --adapter FILE`: the session's answers are the adapter's (the same answer tokens as the Python API
    with that adapter active on the rendered context), different from the base model's; a missing file is named."""
    red = served / "model" / "red.onnx_adapter"

    def chat(*extra):
        out = subprocess.run([_ogx(), "chat", str(served / "model"), "--json", "--greedy", "--max-new-tokens", "6",
                              *extra], input="hello there\n", check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    tuned, base = chat("--adapter", str(red)), chat()
    assert tuned["tokens"] != base["tokens"]
    model = og.Model(str(served / "model"))
    adapters = og.Adapters(model)
    adapters.load(str(red), "red")
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(tuned["context"]) + 6)
    g = og.Generator(model, params)
    g.set_active_adapter(adapters, "red")
    g.append_tokens(tuned["context"])
    want = []
    while not g.is_done() and len(want) < 6:
        g.generate_next_token()
        want.append(int(g.get_next_tokens()[0]))
    assert tuned["tokens"][:len(want)] == want
    bad = subprocess.run([_ogx(), "chat", str(served / "model"), "--adapter", str(served / "missing.onnx_adapter")],
                         input="hi\n", capture_output=True, text=True)
    assert bad.returncode != 0 and "missing.onnx_adapter" in bad.stderr


def _post(url, body):
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.parametrize("provider", ["cpu", "dml"])
def test_serve_two_adapters(served, provider):
    """`ogx serve --adapter red=... --adapter blue=...`: /v1/models lists the base model and both adapters; a request
    naming an adapter gets that adapter's tokens (as the Python API gives them on the CPU: fp32, the same tokens on
    Vulkan), concurrent requests with different adapters do not mix (on Vulkan those with the same adapter share model
    runs); an unknown model name is a 404. dml: Vulkan on lavapipe, skipped without a Vulkan device."""
    import concurrent.futures
    import urllib.request
    red, blue = served / "model" / "red.onnx_adapter", served / "model_blue" / "blue.onnx_adapter"
    model = og.Model(str(served / "model"))
    adapters = og.Adapters(model)
    adapters.load(str(red), "red")
    adapters.load(str(blue), "blue")
    tokenizer = og.Tokenizer(model)
    n = 12

    def api_text(name):
        params = og.GeneratorParams(model)
        params.set_search_options(do_sample=False, max_length=len(PROMPT) + n, min_length=0, repetition_penalty=1.0)
        g = og.Generator(model, params)
        if name:
            g.set_active_adapter(adapters, name)
        g.append_tokens(np.array([PROMPT], dtype=np.int32))
        while not g.is_done():
            g.generate_next_token()
        return list(g.get_sequence(0))[len(PROMPT):]

    want = {name: api_text(name) for name in ("red", "blue", "")}
    assert want["red"] != want["blue"] and want["red"] != want[""]
    device = ["--provider", "dml", "--provider-option", "hardware_device_type=cpu"] if provider == "dml" else []
    proc = subprocess.Popen([_ogx(), "serve", str(served / "model"), "--port", "0", "--model-name", "base",
                             "--adapter", f"red={red}", "--adapter", f"blue={blue}", *device],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        if not line and provider == "dml":
            err = proc.stderr.read()
            if "no Vulkan device" in err or "no vulkan (dml) provider" in err:
                pytest.skip("no Vulkan device: " + err.strip())
        assert "listening on" in line, proc.stderr.read()
        url = line.split("listening on ")[1].strip()
        with urllib.request.urlopen(url + "/v1/models", timeout=30) as r:
            models = json.loads(r.read())["data"]
        assert [m["id"] for m in models] == ["base", "red", "blue"]
        assert [m["parent"] for m in models] == [None, "base", "base"]

        used = {}  # completion tokens by model name, from the responses' usage

        def complete(name):
            status, body = _post(url + "/v1/completions", {"model": name, "prompt": PROMPT, "max_tokens": n,
                                                           "temperature": 0})
            assert status == 200, body
            assert body["model"] == name
            used[name] = used.get(name, 0) + body["usage"]["completion_tokens"]
            return body["choices"][0]["text"]

        def text_of(tokens):  # the server streams text after the prompt: its decode, compared without edge spaces
            return tokenizer.decode(np.array(tokens, dtype=np.int32)).strip()

        names = ["red", "blue", "base", "red", "blue", "base", "blue", "red"]
        with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
            got = list(pool.map(complete, names))
        for name, text in zip(names, got):
            assert text.strip() == text_of(want["" if name == "base" else name]), name
        assert got[0] != got[1]
        # /metrics counts each served model's requests and generated tokens (3 red, 3 blue, 2 base).
        with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
            metrics = r.read().decode()
        for name, count in (("red", 3), ("blue", 3), ("base", 2)):
            assert f'ogx_model_requests_total{{model="{name}"}} {count}\n' in metrics, metrics
            assert f'ogx_model_generation_tokens_total{{model="{name}"}} {used[name]}\n' in metrics, metrics
        status, body = _post(url + "/v1/completions", {"model": "green", "prompt": PROMPT, "max_tokens": 2})
        assert status == 404 and body["error"]["param"] == "model" and "red" in body["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
