"""Hardening (issue 17) at the Python boundary: strings with a NUL are refused with ValueError (the C API takes
NUL-terminated strings and would silently cut them), numeric search options are range-checked in the type the core
uses, and a tiny temperature is refused rather than sampling garbage."""
import os

import pytest

import ogx as og


def test_nul_in_text_raises_value_error(model_dir):
    model = og.Model(model_dir)
    tok = og.Tokenizer(model)
    with pytest.raises(ValueError, match="encode: embedded null character"):
        tok.encode("hello\0world")
    assert list(tok.encode("hello")) == list(tok.encode("hello"))
    with pytest.raises(ValueError, match="encode_batch"):
        tok.encode_batch(["fine", "bad\0"])
    with pytest.raises(ValueError, match="to_token_id"):
        tok.to_token_id("a\0b")
    with pytest.raises(ValueError, match="apply_chat_template"):
        tok.apply_chat_template('[{"role": "user", "content": "hi"}]\0junk')
    with pytest.raises(ValueError, match="template_str"):
        tok.apply_chat_template([{"role": "user", "content": "hi"}], template_str="{{ 1 }}\0")
    # Inside a message given as a list, the NUL is carried (json.dumps escapes it), not cut.
    out = tok.apply_chat_template([{"role": "user", "content": "a\0b"}], template_str="{{ messages[0].content|length }}")
    assert out == "3"


def test_nul_in_paths_and_config_strings(model_dir):
    with pytest.raises(ValueError, match="embedded null character"):
        og.Model(model_dir + "\0junk")
    with pytest.raises(ValueError, match="embedded null character"):
        og.Config(model_dir + "\0junk")
    with pytest.raises(ValueError, match="embedded null character"):
        og.Model(os.fsencode(model_dir).decode() + "\0")
    config = og.Config(model_dir)
    with pytest.raises(ValueError, match="append_provider"):
        config.append_provider("cpu\0dml")
    with pytest.raises(ValueError, match="set_provider_option"):
        config.set_provider_option("dml", "device_id", "0\0")
    with pytest.raises(ValueError, match="overlay"):
        config.overlay('{"search": {}}\0')


def test_search_options_are_range_checked(model_dir):
    params = og.GeneratorParams(og.Model(model_dir))
    with pytest.raises(og.OgxError, match="batch_size"):
        params.set_search_options(batch_size=-2147483648)
    with pytest.raises(og.OgxError, match="no_repeat_ngram_size"):
        params.set_search_options(no_repeat_ngram_size=2**40)
    with pytest.raises(og.OgxError, match="max_length"):
        params.set_search_options(max_length=2**31)
    with pytest.raises(og.OgxError, match="temperature"):
        params.set_search_options(temperature=1e-45)
    with pytest.raises(ValueError, match="embedded null character"):
        params.set_search_options(**{"top_k\0": 5})
    params.set_search_options(max_length=32, no_repeat_ngram_size=3, temperature=0.5)
