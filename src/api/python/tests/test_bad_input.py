"""Bad input from Python: wrong types, bad values, unknown providers and misuse raise exceptions with a message;
nothing crashes."""
import numpy as np
import pytest

import ogx as og


def test_wrong_types_raise_type_error(model_dir):
    with pytest.raises(TypeError, match="expected a path"):
        og.Config(42)
    with pytest.raises(TypeError):
        og.Config(None)
    with pytest.raises(TypeError, match="Model"):
        og.Model(3.5)
    model = og.Model(model_dir)
    with pytest.raises(TypeError):
        og.Tokenizer("not a model")
    with pytest.raises(TypeError):
        og.Tokenizer(None)
    with pytest.raises(TypeError):
        og.GeneratorParams(None)
    with pytest.raises(TypeError):
        og.Generator(model, "params")
    with pytest.raises(TypeError):
        og.Generator(og.GeneratorParams(model), model)
    params = og.GeneratorParams(model)
    with pytest.raises(TypeError, match="max_length"):
        params.set_search_options(max_length="long")
    with pytest.raises(TypeError, match="top_k"):
        params.set_search_options(top_k=None)
    generator = og.Generator(model, params)
    with pytest.raises(TypeError, match="integer token ids"):
        generator.append_tokens([1.5, 2.5])
    with pytest.raises(TypeError, match="token ids"):
        generator.append_tokens("hello")
    with pytest.raises(TypeError, match="integer token ids"):
        generator.append_tokens(np.array([True, False]))
    with pytest.raises(og.OgxError, match="batch_size"):
        generator.append_tokens([[1, 2], [3]])  # two prompts for a batch of one
    with pytest.raises(TypeError, match="array of numbers"):
        generator.set_logits(["a"] * 2048)
    tokenizer = og.Tokenizer(model)
    with pytest.raises(TypeError):
        tokenizer.encode(123)
    with pytest.raises(TypeError, match="token ids"):
        tokenizer.decode("abc")
    with pytest.raises(TypeError, match="JSON string or a list"):
        tokenizer.apply_chat_template(12)
    with pytest.raises(TypeError):
        tokenizer.create_stream().decode("x")


def test_bad_values_raise_with_a_message(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    with pytest.raises(og.OgxError, match="unknown search option 'no_such_option'"):
        params.set_search_options(no_such_option=1)
    with pytest.raises(og.OgxError, match="top_p"):
        params.set_search_options(top_p=2.0)
    with pytest.raises(og.OgxError, match="finite"):
        params.set_search_options(temperature=float("nan"))
    params.set_search_options(max_length=8)
    generator = og.Generator(model, params)
    with pytest.raises(og.OgxError, match="append tokens first"):
        generator.get_logits()
    with pytest.raises(ValueError, match="does not fit int32"):
        generator.append_tokens([1, 2 ** 40])
    with pytest.raises(ValueError, match="does not fit int32"):
        generator.append_tokens(np.array([2 ** 63 + 5], dtype=np.uint64))
    with pytest.raises(ValueError, match="scalar"):
        generator.append_tokens(np.int32(5))
    with pytest.raises(og.OgxError, match="batch_size"):
        generator.append_tokens(np.ones((2, 3), dtype=np.int32))
    with pytest.raises(og.OgxError, match="out of range"):
        generator.append_tokens([1, 99999])
    with pytest.raises(og.OgxError, match="no tokens"):
        generator.append_tokens([])
    with pytest.raises(og.OgxError, match="max_length 8"):
        generator.append_tokens(list(range(1, 20)))
    generator.append_tokens(np.array([[1, 2, 3]], dtype=np.int64))  # [1, N] is batch size 1
    with pytest.raises(og.OgxError, match="expected 2048 values"):
        generator.set_logits(np.zeros(10, dtype=np.float32))
    with pytest.raises(og.OgxError, match="rewind_to"):
        generator.rewind_to(50)
    with pytest.raises(ValueError):
        generator.rewind_to(-1)
    with pytest.raises(og.OgxError, match="no sequence 3"):
        generator.get_sequence(3)
    while not generator.is_done():
        generator.generate_next_token()
    with pytest.raises(og.OgxError, match="done"):
        generator.generate_next_token()
    tokenizer = og.Tokenizer(model)
    with pytest.raises(og.OgxError):
        tokenizer.decode([5000])
    with pytest.raises(og.OgxError, match="invalid JSON"):
        tokenizer.apply_chat_template("[{")
    with pytest.raises(og.OgxError, match="line 1"):
        tokenizer.apply_chat_template("[]", template_str="{% for %}")


def test_unknown_provider_lists_the_known_ones(model_dir):
    # As ONNX Runtime GenAI: any provider name is accepted by the config; creating the model reports it.
    config = og.Config(model_dir)
    config.append_provider("cuda")
    config.set_provider_option("qnn", "backend_path", "x")
    with pytest.raises(og.OgxError, match=r"unknown execution provider 'cuda' \(known: cpu, vulkan, dml\)"):
        og.Model(config)
    try:
        og.Model(config)
    except og.OgxError as e:
        assert e.code == 3  # OgxErrorCode_Runtime
    config.clear_providers()
    config.set_provider_option("qnn", "backend_path", "x")
    with pytest.raises(og.OgxError, match="unknown execution provider 'qnn'"):
        og.Model(config)


def test_missing_folders_and_bad_config(tmp_path):
    with pytest.raises(og.OgxError, match="genai_config.json"):
        og.Config(str(tmp_path))
    (tmp_path / "genai_config.json").write_text('{"model": {"context_length": "long"}}')
    with pytest.raises(og.OgxError, match="model.context_length"):
        og.Config(str(tmp_path))
    (tmp_path / "genai_config.json").write_text("{}")
    with pytest.raises(og.OgxError, match="model.onnx"):
        og.Model(str(tmp_path))


def test_model_without_tokenizer(shared_dir):
    model = og.Model(str(shared_dir / "golden/models/llama/fp32-cpu"))
    with pytest.raises(og.OgxError):
        og.Tokenizer(model)


def test_provider_options_from_the_environment_are_checked(model_dir, monkeypatch):
    config = og.Config(model_dir)
    config.append_provider("dml")
    monkeypatch.setenv("OGX_PROVIDER_OPTIONS", "[1, 2]")
    with pytest.raises(og.OgxError, match="OGX_PROVIDER_OPTIONS must be a JSON object"):
        og.Model(config)
