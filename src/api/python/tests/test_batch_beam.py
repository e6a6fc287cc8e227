"""Batches and beam search from Python, against ONNX Runtime GenAI's sequences (../shared/golden/search_ort.json,
llama fp32-cpu): append_tokens with a list of lists (different lengths) and with a 2-D numpy array, get_sequence
per row and per hypothesis, get_logits with one row per beam, and clear errors for bad options."""
import json

import numpy as np
import pytest

import ogx as og


def golden_case(shared_dir, name):
    cases = json.loads((shared_dir / "golden" / "search_ort.json").read_text())["models"]["llama"]["fp32-cpu"]
    return next(c for c in cases if c["name"] == name)


def case_params(model, case):
    o = case["options"]
    padded = max(len(p) for p in case["prompts"])
    params = og.GeneratorParams(model)
    opts = dict(batch_size=len(case["prompts"]), max_length=padded + o["max_new_tokens"], do_sample=False,
                num_beams=o.get("num_beams", 1), num_return_sequences=o.get("num_return_sequences", 1),
                length_penalty=o.get("length_penalty", 1.0), early_stopping=o.get("early_stopping", True))
    if "min_new_tokens" in o:
        opts["min_length"] = padded + o["min_new_tokens"]
    params.set_search_options(**opts)
    return params, padded


def run_case(model, case, tokens):
    params, padded = case_params(model, case)
    gen = og.Generator(model, params)
    gen.append_tokens(tokens)
    while not gen.is_done():
        gen.generate_next_token()
    return [gen.get_sequence(i)[padded:].tolist() for i in range(len(case["sequences"]))]


def test_batch_of_lists_of_different_lengths(model_dir, shared_dir):
    model = og.Model(model_dir)
    case = golden_case(shared_dir, "batch_greedy")
    assert run_case(model, case, case["prompts"]) == case["sequences"]


def test_batch_beam_search_best_first(model_dir, shared_dir):
    model = og.Model(model_dir)
    case = golden_case(shared_dir, "batch_beam4")
    assert run_case(model, case, case["prompts"]) == case["sequences"]


def test_two_dimensional_numpy_array_right_padded(model_dir, shared_dir):
    # As tokenizer.encode_batch gives it: padded on the right with pad_token_id (2 for this model).
    model = og.Model(model_dir)
    case = golden_case(shared_dir, "batch_greedy")
    width = max(len(p) for p in case["prompts"])
    arr = np.full((len(case["prompts"]), width), 2, dtype=np.int32)
    for i, p in enumerate(case["prompts"]):
        arr[i, :len(p)] = p
    assert run_case(model, case, arr) == case["sequences"]


def test_logits_have_one_row_per_beam(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=10, num_beams=4, batch_size=2, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens([[1, 450, 996], [1, 903]])
    assert gen.get_logits().shape == (8, 1, 2048)
    gen.generate_next_token()
    assert gen.get_next_tokens().shape == (8,)
    logits = gen.get_logits()
    assert logits.shape == (8, 1, 2048)
    gen.set_logits(logits)
    gen.generate_next_token()
    assert len(gen.get_sequence(1)) == 5  # prompt padded to 3 + 2 generated
    with pytest.raises(og.OgxError):
        gen.get_sequence(2)  # num_return_sequences 1: one hypothesis per prompt


@pytest.mark.parametrize("opts, word", [(dict(num_beams=0), "num_beams"), (dict(num_beams=33), "num_beams"),
                                        (dict(num_beams=2, num_return_sequences=3), "num_return_sequences"),
                                        (dict(batch_size=33), "batch_size")])
def test_bad_options_are_clear_errors(model_dir, opts, word):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    with pytest.raises(og.OgxError, match=word):
        params.set_search_options(max_length=8, **opts)
        og.Generator(model, params)


def test_wrong_number_of_prompts(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=8, batch_size=2)
    gen = og.Generator(model, params)
    with pytest.raises(og.OgxError, match="expected 2 sequences"):
        gen.append_tokens([[1, 2, 3]])
    gen.append_tokens([[1, 2, 3], [1, 5]])
    assert gen.get_sequence(1).tolist()[:2] == [1, 5]
