"""The rest of onnxruntime_genai's text-model API: Tensor / NamedTensors, log options, telemetry and provider-library
switches, in-memory models, device filtering setters, search options read back, generator model I/O, runtime
options, tokenizer options and markers, and the multimodal names (present, raising)."""
import json
import os
import pathlib

import numpy as np
import pytest

import ogx as og


def test_tensor_and_named_tensors():
    rng = np.random.default_rng(7)
    a = rng.random((2, 3)).astype(np.float32)
    t = og.Tensor(a)
    assert t.shape() == [2, 3] and t.type() == 1  # OgaElementType float32
    a[0, 0] = 99.0  # the tensor holds a copy
    assert t.as_numpy()[0, 0] != 99.0
    named = og.NamedTensors()
    named["input_ids"] = np.array([[0, 0, 0, 52], [0, 0, 195, 731]], dtype=np.int32)
    named["x"] = t
    named["h"] = og.Tensor(rng.random(4).astype(np.float16))
    assert len(named) == 3 and "x" in named and "y" not in named
    assert named.keys() == ["input_ids", "x", "h"]
    np.testing.assert_array_equal(named["x"].as_numpy(), t.as_numpy())
    assert named["h"].as_numpy().dtype == np.float16
    assert named["input_ids"].as_numpy().dtype == np.int32
    for name in named.keys():
        del named[name]
    assert len(named) == 0
    with pytest.raises(KeyError):
        named["x"]
    with pytest.raises(TypeError):
        og.Tensor(np.array(["a"]))


def test_module_switches():
    og.disable_telemetry_events()  # documented no-ops: ogx sends no telemetry
    og.enable_telemetry_events()
    with pytest.raises(og.OgxError, match="loads no provider libraries"):
        og.register_execution_provider_library("WebGpuExecutionProvider", "/x/libwebgpu.so")
    with pytest.raises(og.OgxError, match="loads no provider libraries"):
        og.unregister_execution_provider_library("WebGpuExecutionProvider")
    assert og.get_current_gpu_device_id() == 0
    og.set_current_gpu_device_id(1)
    assert og.get_current_gpu_device_id() == 1
    og.set_current_gpu_device_id(0)
    with pytest.raises(og.OgxError, match="negative"):
        og.set_current_gpu_device_id(-1)
    with pytest.raises(og.OgxError, match="unknown log option 'colour'"):
        og.set_log_options(colour=True)
    with pytest.raises(TypeError):
        og.set_log_options(enabled=3)
    for name in ("Images", "Audios", "MultiModalProcessor"):
        assert hasattr(og, name)
    with pytest.raises(og.OgxError, match="multimodal models are not supported"):
        og.Images.open("a.png")


def _step(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=12)
    generator = og.Generator(model, params)
    generator.append_tokens(np.array([[1, 5, 9, 13]], dtype=np.int32))
    generator.generate_next_token()


def test_log_options_callback_and_file(model_dir, tmp_path):
    lines = []
    og.set_log_options(enabled=True, generate_next_token=True)
    og.set_log_callback(lines.append)
    try:
        _step(model_dir)
        assert any("generate_next_token" in line for line in lines), lines
        log_file = tmp_path / "ogx.log"
        lines.clear()
        og.set_log_options(filename=str(log_file))  # a file takes the messages instead of the callback
        _step(model_dir)
        assert log_file.stat().st_size > 0 and not lines
    finally:
        og.set_log_options(enabled=False, generate_next_token=False, filename="")
        og.set_log_callback(None)
        og.set_log_level("warning")


def test_unknown_provider_is_reported_by_the_model(model_dir):
    config = og.Config(model_dir)
    config.clear_providers()
    config.append_provider("cuda")
    config.set_provider_option("cuda", "enable_cuda_graph", "1")
    with pytest.raises(og.OgxError, match=r"unknown execution provider 'cuda' \(known: cpu, vulkan, dml\)"):
        og.Model(config)


def test_device_filtering_setters(model_dir):
    config = og.Config(model_dir)
    config.set_decoder_provider_options_hardware_device_type("dml", "GPU")
    config.set_decoder_provider_options_hardware_vendor_id("dml", 4318)
    config.set_decoder_provider_options_hardware_device_id("dml", 8)
    config.clear_decoder_provider_options_hardware_device_type("dml")
    config.clear_decoder_provider_options_hardware_device_id("dml")
    config.clear_decoder_provider_options_hardware_vendor_id("dml")
    with pytest.raises(og.OgxError, match="not one of CPU, GPU, NPU"):
        config.set_decoder_provider_options_hardware_device_type("dml", "tpu")
    config.clear_providers()
    assert og.Model(config).device_type == "CPU"


def test_model_from_memory(model_dir):
    reference = og.Model(model_dir)
    onnx_bytes = (pathlib.Path(model_dir) / "model.onnx").read_bytes()
    for wrap in (bytes, bytearray, memoryview):
        config = og.Config(model_dir)
        config.add_model_data("model.onnx", wrap(onnx_bytes))
        model = og.Model(config)
        config.remove_model_data("model.onnx")
        for m in (reference, model):
            params = og.GeneratorParams(m)
            params.set_search_options(do_sample=False, max_length=10)
            g = og.Generator(m, params)
            g.append_tokens([1, 5, 9])
            while not g.is_done():
                g.generate_next_token()
            if m is reference:
                expected = g.get_sequence(0)
        np.testing.assert_array_equal(g.get_sequence(0), expected)
    config = og.Config(model_dir)
    config.add_model_data("model.onnx", b"not an onnx model")
    with pytest.raises(og.OgxError, match="model data added to the config"):
        og.Model(config)
    with pytest.raises(og.OgxError, match="no model data named 'other.onnx'"):
        config.remove_model_data("other.onnx")
    with pytest.raises(TypeError):
        config.add_model_data("model.onnx", np.zeros((2, 2), dtype=np.float32))


def test_get_search_options(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=10, batch_size=2, top_k=7)
    opts = params.get_search_options()
    assert int(opts["max_length"]) == 10 and int(opts["batch_size"]) == 2 and int(opts["top_k"]) == 7
    assert opts["early_stopping"] is True and opts["do_sample"] is False
    assert set(opts) >= {"chunk_size", "num_beams", "num_return_sequences", "past_present_share_buffer",
                         "random_seed", "repetition_penalty", "temperature", "top_p", "length_penalty"}
    assert opts["presence_penalty"] == 0 and opts["frequency_penalty"] == 0
    params.set_search_options(presence_penalty=-1.25, frequency_penalty=0.5)  # OpenAI's penalties, [-2, 2]
    opts = params.get_search_options()
    assert opts["presence_penalty"] == -1.25 and opts["frequency_penalty"] == 0.5
    with pytest.raises(og.OgxError, match="frequency_penalty"):
        params.set_search_options(frequency_penalty=3)


def test_generator_model_io(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=10, batch_size=2)
    generator = og.Generator(model, params)
    prompt = np.array([[1, 5, 9, 13], [1, 7, 11, 3]], dtype=np.int32)
    generator.append_tokens(og.Tensor(prompt))
    logits = generator.get_output("logits")
    assert logits.shape[:2] == (2, 4)
    # The last position's logits are the ones the next token is picked from.
    np.testing.assert_allclose(logits[:, -1, :], generator.get_logits()[:, 0, :], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(generator.get_input("input_ids"), prompt)
    generator.generate_next_token()
    generator.generate_next_token()
    assert generator.get_output("logits").shape[:2] == (2, 1)
    np.testing.assert_array_equal(generator.get_input("input_ids")[:, 0], [s[4] for s in
                                  (generator.get_sequence(0), generator.get_sequence(1))])
    with pytest.raises(og.OgxError, match="no output 'nonexistent'"):
        generator.get_output("nonexistent")
    with pytest.raises(og.OgxError, match="set by the generator itself"):
        generator.set_model_input("input_ids", np.zeros((2, 1), dtype=np.int64))
    with pytest.raises(og.OgxError, match="has no input 'extra'"):
        generator.set_model_input("extra", np.zeros(1, dtype=np.float32))
    inputs = og.NamedTensors()
    inputs["extra"] = np.zeros(1, dtype=np.float32)
    with pytest.raises(og.OgxError, match="has no input 'extra'"):
        generator.set_inputs(inputs)
    # No recurrent state, no hidden_states input: upstream's no-ops (tests/hidden_states_test.cpp feeds a model
    # with that input).
    before = generator.get_logits()
    generator.snapshot_state()
    generator.set_hidden_states(np.ones((2, 1, 8), dtype=np.float32))
    np.testing.assert_array_equal(generator.get_logits(), before)
    with pytest.raises(og.OgxError, match="streaming"):
        model.create_streaming_processor()


def test_terminate_session(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=20)
    generator = og.Generator(model, params)
    generator.append_tokens([1, 5, 9])
    generator.set_runtime_option("terminate_session", "1")
    assert generator.is_done()
    with pytest.raises(og.OgxError, match="session terminated"):
        generator.generate_next_token()
    generator.set_runtime_option("terminate_session", "0")
    assert not generator.is_done()
    generator.generate_next_token()
    with pytest.raises(og.OgxError, match="unknown runtime option"):
        generator.set_runtime_option("lora", "1")


def test_tokenizer_options_and_markers(model_dir):
    tokenizer = og.Tokenizer(og.Model(model_dir))
    with_bos = tokenizer.encode("hello there")
    tokenizer.update_options(add_special_tokens=False)
    without = tokenizer.encode("hello there")
    assert list(with_bos[1:]) == list(without) and with_bos[0] == tokenizer.bos_token_id
    tokenizer.update_options(add_special_tokens="true", skip_special_tokens="false")
    assert tokenizer.decode(with_bos).startswith(tokenizer.decode([tokenizer.bos_token_id]))
    with pytest.raises(og.OgxError, match="unknown option 'lowercase'"):
        tokenizer.update_options(lowercase=True)
    with pytest.raises(og.OgxError, match="must be"):
        tokenizer.update_options(skip_special_tokens="maybe")
    for marker in ("bot_token_id", "eot_token_id", "bor_token_id", "eor_token_id"):
        with pytest.raises(og.OgxError, match=marker + " is not defined for this model"):
            getattr(tokenizer, marker)
