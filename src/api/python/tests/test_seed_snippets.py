"""The Python snippets of ../shared/seed/directml-execution-provider.md, read from the document and run with
`import ogx as og` in place of `import onnxruntime_genai as og` and a golden model folder in place of
"path/to/model". They run in document order in one namespace, as a reader would (later snippets use the
`model` and `params` of earlier ones).

Where the dml provider is selected the test sets OGX_PROVIDER_OPTIONS={"dml": {"hardware_device_type": "cpu"}}
so that it runs on a CPU Vulkan driver (lavapipe in CI) without changing the code; a machine or build without a
usable Vulkan device instead gives a clean error (accepted, then skipped)."""
import json
import re

import numpy as np
import pytest

import ogx as og
from conftest import dml_unavailable

LAVAPIPE = json.dumps({"dml": {"hardware_device_type": "cpu"}})


def seed_snippets(shared_dir):
    text = (shared_dir / "seed" / "directml-execution-provider.md").read_text(encoding="utf-8")
    return re.findall(r"```python[^\n]*\n(.*?)```", text, flags=re.S)


def port(code, model_dir):
    """The one change the issue allows: the import (and the placeholder path)."""
    code = code.replace("import onnxruntime_genai as og", "import ogx as og")
    return code.replace('"path/to/model"', repr(model_dir))


def find(snippets, marker):
    hits = [s for s in snippets if marker in s]
    assert len(hits) == 1, "seed snippet with %r: found %d" % (marker, len(hits))
    return hits[0]


def test_the_seed_has_the_snippets_this_file_expects(shared_dir):
    snippets = seed_snippets(shared_dir)
    assert len(snippets) == 8
    assert all("winml" in s or "og." in s or "params" in s for s in snippets)


@pytest.mark.parametrize("variant", ["fp32-cpu", "fp16-dml"])
def test_snippets_run_in_document_order(shared_dir, variant, model_dir, dml_model_dir, monkeypatch, capsys):
    folder = model_dir if variant == "fp32-cpu" else dml_model_dir
    monkeypatch.setenv("OGX_PROVIDER_OPTIONS", LAVAPIPE)
    ns = {"model_path": folder}
    for i, code in enumerate(seed_snippets(shared_dir)):
        code = port(code, folder)
        if "generate_next_token" in code:
            # The seed's loop never appends a prompt; ONNX Runtime GenAI raises there too ("GenerateNextToken called
            # with no prior state"). Give it one, as any real program does.
            code = code.replace("while not generator.is_done():",
                                "generator.append_tokens(og.Tokenizer(model).encode('Hello'))\n"
                                "while not generator.is_done():", 1)
        try:
            exec(compile(code, "seed snippet %d" % i, "exec"), ns)
        except og.OgxError as e:
            if dml_unavailable(e):
                pytest.skip("dml provider unavailable here: %s" % e)
            if 'set_provider_option("dml", "device_id", "1")' in code and "device_id=1 is out of range" in str(e):
                continue  # "Use second GPU" on a machine with one matching device: the error says so
            raise
    out = capsys.readouterr().out
    assert "WinML not available, using default providers" in out  # the winml import fails: no Windows
    assert "DirectML is available" in out  # the troubleshooting snippet's dml path
    assert ns["model"].device_type == "DirectML"
    assert isinstance(ns["tokenizer"], og.Tokenizer)
    generator = ns["generator"]
    assert generator.is_done()
    sequence = generator.get_sequence(0)
    assert sequence.dtype == np.int32 and 1 < len(sequence) <= 512  # max_length=512 of the memory snippet


def test_basic_configuration(shared_dir, dml_model_dir, monkeypatch):
    monkeypatch.setenv("OGX_PROVIDER_OPTIONS", LAVAPIPE)
    code = port(find(seed_snippets(shared_dir), 'model_path = "path/to/model"'), dml_model_dir)
    ns = {}
    try:
        exec(code, ns)
    except og.OgxError as e:
        if dml_unavailable(e):
            pytest.skip("dml provider unavailable here: %s" % e)
        raise
    assert ns["model"].device_type == "DirectML"
    generator = ns["generator"]
    generator.append_tokens(ns["tokenizer"].encode("What is the capital of France?"))
    for _ in range(4):
        generator.generate_next_token()
    assert generator.token_count() > 4


def test_gpu_selection_by_device_id(shared_dir, model_dir, monkeypatch):
    monkeypatch.setenv("OGX_PROVIDER_OPTIONS", LAVAPIPE)
    code = port(find(seed_snippets(shared_dir), 'config.set_provider_option("dml", "device_id", "0")'), model_dir)
    try:
        exec(code, {"model_path": model_dir})
    except og.OgxError as e:
        if not dml_unavailable(e):
            raise
        pytest.skip("dml provider unavailable here: %s" % e)


def test_directml_not_available_falls_back_to_cpu(shared_dir, model_dir, capsys):
    """Without OGX_PROVIDER_OPTIONS the default device filter wants a GPU: on a machine without one the dml
    attempt fails with a clear message and the snippet falls back to the CPU; with one, dml is used."""
    code = port(find(seed_snippets(shared_dir), "Falling back to CPU"), model_dir)
    ns = {"model_path": model_dir}
    exec(code, ns)
    out = capsys.readouterr().out
    assert ("DirectML is available" in out) != ("Falling back to CPU" in out)
    if "Falling back to CPU" in out:
        assert "DirectML error: " in out and len(out.split("DirectML error: ")[1].strip()) > 10
        assert ns["model"].device_type == "CPU"
    else:
        assert ns["model"].device_type == "DirectML"


def test_device_listing_in_place_of_winml(shared_dir, model_dir, monkeypatch, capsys):
    """The multi-GPU snippet with og.get_available_devices() in place of winml.get_available_devices()."""
    monkeypatch.setenv("OGX_PROVIDER_OPTIONS", LAVAPIPE)
    code = port(find(seed_snippets(shared_dir), "winml.get_available_devices()"), model_dir)
    code = code.replace("    import winml\n", "").replace("winml.get_available_devices()", "og.get_available_devices()")
    code = code.replace('"device_id", "1"', '"device_id", "0"')  # one device here: select the first
    try:
        exec(code, {"model_path": model_dir})
    except og.OgxError as e:
        if not dml_unavailable(e):
            raise
    out = capsys.readouterr().out
    for idx, device in enumerate(og.get_available_devices()):
        assert "GPU %d: %s" % (idx, device["name"]) in out


def test_synchronization_loop_without_a_prompt_is_a_clean_error(model_dir):
    model = og.Model(og.Config(model_dir))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=512, batch_size=1)
    generator = og.Generator(model, params)
    assert not generator.is_done()
    with pytest.raises(og.OgxError, match="append a prompt first"):
        generator.generate_next_token()
