"""Speculative decoding (n-gram drafts here; draft models: tests/speculative_test.cpp) through onnxruntime_genai's API: greedy tokens identical to plain decoding (one token
per generate_next_token call), fewer forward passes on repetitive text, mid-round calls that discard what was
verified but not handed out, and option checks."""
import pathlib

import numpy as np
import pytest

import ogx as og

REPO = pathlib.Path(__file__).resolve().parents[4]
DEFAULT_MODEL = REPO / "models" / "ogx-debian-10m" / "int4"  # in the repository: no ../shared needed


@pytest.fixture(scope="module")
def model():
    if not (DEFAULT_MODEL / "genai_config.json").exists():
        pytest.skip("the default model folder is absent")
    return og.Model(str(DEFAULT_MODEL))


@pytest.fixture(scope="module")
def prompt(model):
    # Repetitive text: the model repeats some of it, so some drafts are accepted.
    text = "one two three four five one two three four five one two three four five one two"
    return [int(t) for t in og.Tokenizer(model).encode(text)]


def run(model, prompt, max_length, spec=None, steps=None, **search):
    params = og.GeneratorParams(model)
    params.set_search_options(**{"do_sample": False, "max_length": max_length, **search})
    if spec:
        params.set_speculative_options(**spec)
    g = og.Generator(model, params)
    g.append_tokens(np.array([prompt], dtype=np.int32))
    streamed = []
    while not g.is_done() and (steps is None or len(streamed) < steps):
        g.generate_next_token()
        streamed.append(int(g.get_next_tokens()[0]))
    return g, streamed


@pytest.mark.parametrize("spec", [dict(ngram_size=2, max_draft_tokens=3), dict(ngram_size=2, max_draft_tokens=4),
                                  dict(ngram_size=3, max_draft_tokens=8),
                                  dict(ngram_size=2, max_draft_tokens=4, ngram_chained_lookup=True),
                                  dict(ngram_size=3, max_draft_tokens=4, min_adaptive_k=2, cooldown=True),
                                  dict(ngram_size=4, max_draft_tokens=6, ngram_chained_lookup=True, cooldown=True)])
def test_greedy_tokens_equal_plain_decoding(model, prompt, spec):
    plain, plain_stream = run(model, prompt, len(prompt) + 40)
    g, stream = run(model, prompt, len(prompt) + 40, spec)
    assert stream == plain_stream  # one token per call, the same tokens
    np.testing.assert_array_equal(g.get_sequence(0), plain.get_sequence(0))
    stats = g.get_speculative_stats()
    # Each call hands out a round's token or makes a standard step (a miss, cooldown), as upstream counts them.
    assert stats["enabled"] and stats["tokens_emitted"] + stats["standard_fallback_steps"] == len(stream)
    assert stats["draft_tokens_accepted"] <= stats["draft_tokens_proposed"]
    assert stats["ngram_lookup_hits"] + stats["ngram_lookup_misses"] > 0
    # Each forward pass hands out the accepted drafts and one picked token.
    assert stats["target_forward_passes"] + stats["draft_tokens_accepted"] <= len(stream) + 1, stats


def test_accepted_drafts_save_forward_passes(model, prompt):
    g, stream = run(model, prompt, len(prompt) + 40, dict(ngram_size=2, max_draft_tokens=4))
    stats = g.get_speculative_stats()
    assert stats["draft_tokens_accepted"] > 0, stats  # this prompt's continuation repeats some of it
    assert stats["target_forward_passes"] < len(stream), stats


def test_penalties_and_min_length_are_applied_as_in_plain_decoding(model, prompt):
    # A round runs several positions at once, whose int4 logits round differently from one-position steps (the
    # kernels' summation order depends on the rows of a call: ~1e-3 here), so the sequences are equal up to a
    # near-tie: at the first difference, if any, the two picks' penalized logits (in plain decoding) are within 0.01.
    penalty = 1.3
    opts = dict(repetition_penalty=penalty, min_length=len(prompt) + 30)
    plain, _ = run(model, prompt, len(prompt) + 32, **opts)
    g, _ = run(model, prompt, len(prompt) + 32, dict(ngram_size=2, max_draft_tokens=5), **opts)
    a, b = list(plain.get_sequence(0)), list(g.get_sequence(0))
    assert len(a) == len(b) == len(prompt) + 32  # min_length held off EOS in both
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if diff:
        i = diff[0]
        ref, _ = run(model, a[:i], len(prompt) + 32, steps=0)
        logits = np.asarray(ref.get_logits(), dtype=np.float64).reshape(-1)
        seen = set(a[:i])
        pen = lambda t: (logits[t] / penalty if logits[t] > 0 else logits[t] * penalty) if t in seen else logits[t]
        assert abs(pen(a[i]) - pen(b[i])) < 0.01, (i, a[i], b[i], pen(a[i]), pen(b[i]))


def test_mid_round_calls_discard_buffered_tokens(model, prompt):
    plain, _ = run(model, prompt, len(prompt) + 30)
    spec = dict(ngram_size=2, max_draft_tokens=6)
    for steps in (3, 5, 8):
        # get_logits mid-round: the logits plain decoding has at that point, and the rest unchanged.
        g, _ = run(model, prompt, len(prompt) + 30, spec, steps=steps)
        ref, _ = run(model, prompt, len(prompt) + 30, steps=steps)
        np.testing.assert_allclose(g.get_logits(), ref.get_logits(), rtol=1e-5, atol=1e-5)
        while not g.is_done():
            g.generate_next_token()
        np.testing.assert_array_equal(g.get_sequence(0), plain.get_sequence(0))
        # rewind mid-round, then generate again: as plain decoding from there.
        g, _ = run(model, prompt, len(prompt) + 30, spec, steps=steps)
        g.rewind_to(len(prompt) + 2)
        while not g.is_done():
            g.generate_next_token()
        np.testing.assert_array_equal(g.get_sequence(0), plain.get_sequence(0))


def test_options(model):
    params = og.GeneratorParams(model)
    assert params.get_speculative_options() == {"max_draft_tokens": 4, "ngram_size": 0, "min_adaptive_k": 0,
                                                "ngram_chained_lookup": False, "cooldown": False}
    params.set_speculative_options(ngram_size=2, max_draft_tokens=6)
    assert params.get_speculative_options()["max_draft_tokens"] == 6
    for bad, match in [(dict(max_draft_tokens=0), r"\[1, 16\]"), (dict(max_draft_tokens=17), r"\[1, 16\]"),
                       (dict(ngram_size=1.5), "integer"), (dict(draft_model="x"), "must be a bool"),
                       (dict(adaptive_k=True), "unknown speculative option 'adaptive_k'"),
                       (dict(ngram_size=1), r"0 \(off\) or 2..16"), (dict(min_adaptive_k=17), r"\[0, 16\]")]:
        with pytest.raises((og.OgxError, TypeError), match=match):
            params.set_speculative_options(**bad)
    assert params.get_speculative_options()["max_draft_tokens"] == 6  # unchanged by the rejected values
    params.set_search_options(do_sample=True, random_seed=3)
    og.Generator(model, params)  # speculative sampling (the rejection test keeps the model's distribution)
    params.set_search_options(do_sample=False, batch_size=2)
    with pytest.raises(og.OgxError, match="batch_size 1"):
        og.Generator(model, params)
    plain = og.Generator(model, og.GeneratorParams(model))
    assert plain.get_speculative_stats()["enabled"] is False


def test_ngram_sampling_gives_plain_sampling_tokens_for_a_seed(model, prompt):
    # N-gram drafts under sampling are checked against the token the sampler draws at each position (one draw per
    # emitted token, as plain decoding), so a seed gives plain sampling's tokens; several seeds give several outputs.
    outputs = set()
    for seed in range(6):
        search = dict(do_sample=True, top_k=8, temperature=0.9, random_seed=seed)
        plain, _ = run(model, prompt, len(prompt) + 24, **search)
        for spec in (dict(ngram_size=2, max_draft_tokens=4), dict(ngram_size=3, max_draft_tokens=6,
                                                                 ngram_chained_lookup=True)):
            g, _ = run(model, prompt, len(prompt) + 24, spec, **search)
            np.testing.assert_array_equal(g.get_sequence(0), plain.get_sequence(0))
        outputs.add(tuple(plain.get_sequence(0)[len(prompt):]))
    assert len(outputs) > 1


def test_statistics_follow_upstreams_names(model, prompt):
    g, stream = run(model, prompt, len(prompt) + 40, dict(ngram_size=2, max_draft_tokens=4, min_adaptive_k=2))
    s = g.get_speculative_stats()
    for key in ("completed_rounds", "interrupted_rounds", "active_rounds", "tokens_queued", "tokens_buffered",
                "effective_k", "adaptive_k_observations", "cooldown_entries", "target_verify_forward_passes",
                "ngram_history_tokens_synced", "estimated_speedup", "formula_supported"):
        assert key in s, key
    assert s["tokens_emitted"] + s["standard_fallback_steps"] == len(stream)
    assert s["rounds"] == s["completed_rounds"] + s["interrupted_rounds"] + s["active_rounds"]
    assert s["tokens_queued"] == s["tokens_emitted"] + s["tokens_discarded"] + s["tokens_buffered"]
    assert s["target_forward_passes"] == (s["target_verify_forward_passes"] + s["target_reanchor_forward_passes"] +
                                          s["target_reconciliation_forward_passes"])
    assert s["draft_tokens_evaluated"] >= s["draft_tokens_accepted"]
    assert s["full_accept_rounds"] + s["partial_accept_rounds"] + s["zero_accept_rounds"] == s["completed_rounds"]
    assert 2 <= s["effective_k"] <= 16
