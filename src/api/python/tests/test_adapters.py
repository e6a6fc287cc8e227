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


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    tool = _ogx_build()
    d = tmp_path_factory.mktemp("lora")
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256,
           "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "bos_token_id": 1, "eos_token_id": 2,
           "hidden_act": "silu"}
    (d / "config.json").write_text(json.dumps(cfg))

    def build(*args):
        subprocess.run([tool, *args], check=True, stdout=subprocess.DEVNULL)

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
