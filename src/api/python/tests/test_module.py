"""The ogx module's onnxruntime_genai API: config edits, model properties, tokenizer, generator, devices."""
import json

import numpy as np
import pytest

import ogx as og


def greedy_params(model, max_length, min_length=0):
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=max_length, min_length=min_length, do_sample=False)
    return params


def test_module_surface():
    for name in ["Config", "Model", "Tokenizer", "TokenizerStream", "GeneratorParams", "Generator", "OgxError",
                 "get_available_devices", "is_vulkan_available", "is_dml_available", "is_cuda_available",
                 "set_log_callback", "set_log_level"]:
        assert hasattr(og, name), name
    assert og.__version__.count(".") == 2
    assert issubclass(og.OgxError, RuntimeError)
    assert og.is_dml_available() == og.is_vulkan_available()
    assert og.is_cuda_available() is False


def test_available_devices_are_dicts():
    devices = og.get_available_devices()
    assert isinstance(devices, list)
    for d in devices:
        assert {"index", "name", "vendor_id", "device_id", "type", "usable", "selected"} <= set(d)


def test_config_and_model(model_dir):
    config = og.Config(model_dir)
    config.clear_providers()
    config.append_provider("cpu")
    config.overlay(json.dumps({"search": {"max_length": 32}}))
    model = og.Model(config)
    assert model.type == "llama"
    assert model.device_type == "CPU"
    assert og.Model(model_dir).type == "llama"  # a path works too
    import pathlib
    assert og.Model(pathlib.Path(model_dir)).device_type == "CPU"  # os.PathLike
    # The overlay's max_length is the default of new params.
    gen = og.Generator(model, og.GeneratorParams(model))
    gen.append_tokens([1] * 32)
    assert gen.is_done()


def test_tokenizer(model_dir):
    tokenizer = og.Tokenizer(og.Model(model_dir))
    ids = tokenizer.encode("What is the capital of France?")
    assert ids.dtype == np.int32 and ids.ndim == 1 and ids[0] == tokenizer.bos_token_id == 1
    assert tokenizer.decode(ids) == "What is the capital of France?"
    assert tokenizer.decode(list(ids)) == tokenizer.decode(ids.astype(np.int64))
    assert list(tokenizer.eos_token_ids) == [2]
    assert tokenizer.pad_token_id == 2
    assert tokenizer.to_token_id("<|assistant|>") == 5
    batch = tokenizer.encode_batch(["a b", "hello there friend"])
    assert batch.dtype == np.int32 and batch.shape[0] == 2
    assert tokenizer.decode_batch(batch) == ["a b", "hello there friend"]
    assert tokenizer.decode_batch([[1, 51], [1]]) == [tokenizer.decode([1, 51]), ""]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    text = tokenizer.apply_chat_template(json.dumps(messages), add_generation_prompt=True)
    assert text == "<s><|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n"
    assert tokenizer.apply_chat_template(messages, add_generation_prompt=False) == text[:-len("<|assistant|>\n")]
    assert tokenizer.apply_chat_template(messages, template_str="{{ messages|length }}") == "2"


def test_tokenizer_stream_concatenates_to_decode(model_dir):
    tokenizer = og.Tokenizer(og.Model(model_dir))
    ids = tokenizer.encode("Streaming text: caf\u00e9, na\u00efve, \u65e5\u672c, emoji \U0001F600 done.")
    stream = tokenizer.create_stream()
    text = "".join(stream.decode(int(t)) for t in ids) + stream.flush()
    assert text == tokenizer.decode(ids)


def test_tokenizer_stream_on_arbitrary_ids(model_dir):
    """Any id sequence (a random model emits byte tokens that split characters) streams without error, as str: the
    full decode's text but for spaces (a SentencePiece word's space is kept at the start of a fresh stream and dropped
    after a special token, as onnxruntime_genai's stream does) and invalid UTF-8 (dropped, not U+FFFD)."""
    tokenizer = og.Tokenizer(og.Model(model_dir))
    rng = np.random.default_rng(7)
    squeeze = lambda s: s.replace(" ", "").replace("\ufffd", "")
    for _ in range(20):
        ids = rng.integers(0, 2048, 64)
        stream = tokenizer.create_stream()
        text = "".join(stream.decode(int(t)) for t in ids) + stream.flush()
        assert isinstance(text, str)
        assert squeeze(text) == squeeze(tokenizer.decode(ids))


def test_tokenizer_stream_reused_for_several_prompts(model_dir):
    """onnxruntime_genai's test_stream: one stream, three prompts (each with its BOS), each prompt's text exactly."""
    tokenizer = og.Tokenizer(og.Model(model_dir))
    stream = tokenizer.create_stream()
    for prompt in ["This is a test.", "Rats are awesome pets!", "The quick brown fox jumps over the lazy dog."]:
        assert "".join(stream.decode(int(t)) for t in tokenizer.encode(prompt)) == prompt


def test_generator_matches_onnxruntime_genai(model_dir, shared_dir):
    ref = json.loads((shared_dir / "golden/models/llama/reference.json").read_text())
    ort = json.loads((shared_dir / "golden/models/llama/ort_reference.json").read_text())
    model = og.Model(model_dir)
    for i, case in enumerate(ref["cases"]):
        prompt = case["prompt"]
        expected = ort["tokens"]["fp32-cpu"][i]
        n = len(prompt) + len(expected)
        generator = og.Generator(model, greedy_params(model, n, n))
        generator.append_tokens(np.array(prompt, dtype=np.int32))
        while not generator.is_done():
            generator.generate_next_token()
        assert generator.get_sequence(0)[len(prompt):].tolist() == expected, "prompt %d" % i


def test_generator_calls(model_dir):
    model = og.Model(model_dir)
    generator = og.Generator(model, greedy_params(model, 20))
    generator.append_tokens([1, 100, 200])
    assert generator.token_count() == 3
    assert generator.get_next_tokens().tolist() == [200]
    logits = generator.get_logits()
    assert logits.shape == (1, 1, 2048) and logits.dtype == np.float32
    generator.generate_next_token()
    first = int(generator.get_next_tokens()[0])
    assert first == int(np.argmax(logits))
    # Steer: only token 7 allowed; the logits read after generate_next_token are the next position's.
    logits = generator.get_logits()
    banned = np.full_like(logits, -np.inf)
    banned[0, 0, 7] = 0.0
    generator.set_logits(banned)
    generator.generate_next_token()
    assert generator.get_sequence(0).tolist() == [1, 100, 200, first, 7]
    # Rewind to the prompt and generate again: same greedy continuation.
    generator.rewind_to(3)
    assert generator.token_count() == 3
    generator.generate_next_token()
    assert int(generator.get_next_tokens()[0]) == first
    # set_logits takes any float array of vocab values (converted to float32).
    generator.set_logits(np.zeros(2048, dtype=np.float64))


def test_search_options(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=True, top_k=5, top_p=0.9, temperature=0.7, random_seed=42,
                              repetition_penalty=1.1, max_length=16, batch_size=1, num_beams=1)
    params.set_search_options(top_k=np.int64(4), temperature=np.float32(0.5), do_sample=np.bool_(True))
    runs = []
    for _ in range(2):
        generator = og.Generator(model, params)
        generator.append_tokens([1, 2, 3])
        while not generator.is_done():
            generator.generate_next_token()
        runs.append(generator.get_sequence(0).tolist())
    assert runs[0] == runs[1]  # same seed, same tokens
    assert len(runs[0]) <= 16


def test_objects_outlive_their_parents(model_dir):
    model = og.Model(model_dir)
    tokenizer = og.Tokenizer(model)
    stream = tokenizer.create_stream()
    generator = og.Generator(model, greedy_params(model, 10))
    del model, tokenizer
    import gc
    gc.collect()
    generator.append_tokens([1, 5])
    generator.generate_next_token()
    stream.decode(int(generator.get_next_tokens()[0]))


def test_log_callback(model_dir):
    messages = []
    og.set_log_callback(messages.append)
    try:
        config = og.Config(model_dir)
        config.overlay('{"search": {"some_future_option": 1}}')
        assert any("some_future_option" in m for m in messages)
        og.set_log_level("error")
        n = len(messages)
        config.overlay('{"search": {"another_future_option": 1}}')
        assert len(messages) == n
    finally:
        og.set_log_level("info")
        og.set_log_callback(None)
    with pytest.raises(TypeError):
        og.set_log_callback(42)
    with pytest.raises(ValueError):
        og.set_log_level("loud")
