"""og.Engine / og.Request (continuous batching) on the default model (models/ogx-debian-10m/int4, CPU): each
request's tokens equal the same prompt generated alone with og.Generator; step() returns the Request object that
was added (with its opaque data); requests join from another thread, leave mid-way, and continue with another
turn; bad use raises og.OgxError with a message. The loops are those of onnxruntime-genai's
examples/python/engine/model-qa.py and continuous-batching.py."""
import pathlib
import threading

import numpy as np
import pytest

import ogx as og

MODEL = pathlib.Path(__file__).resolve().parents[4] / "models" / "ogx-debian-10m" / "int4"


@pytest.fixture(scope="module")
def model():
    config = og.Config(str(MODEL))
    config.clear_providers()
    return og.Model(config)


def params(model, max_length, **search):
    p = og.GeneratorParams(model)
    options = dict(do_sample=False, max_length=max_length, repetition_penalty=1.0)
    options.update(search)
    p.set_search_options(**options)
    return p


def prompt(n, seed):
    rng = np.random.default_rng(seed)
    return np.concatenate([[1], rng.integers(3, 4096, n - 1)]).astype(np.int32)


def alone(model, ids, max_length, **search):
    g = og.Generator(model, params(model, max_length, **search))
    g.append_tokens(ids)
    out = []
    while not g.is_done():
        g.generate_next_token()
        out.append(int(g.get_next_tokens()[0]))
    return out


def test_requests_equal_generation_alone(model):
    engine = og.Engine(model)
    cases = [(prompt(5, 1), 25), (prompt(30, 2), 45), (prompt(12, 3), 30)]
    got = {}
    requests = []
    for i, (ids, ml) in enumerate(cases):
        r = og.Request(params(model, ml))
        r.add_tokens(ids)
        r.set_opaque_data({"case": i})
        engine.add_request(r)
        requests.append(r)
    while request := engine.step():
        assert any(request is r for r in requests)  # the very object added
        case = request.get_opaque_data()["case"]
        while request.has_unseen_tokens():
            got.setdefault(case, []).append(int(request.get_unseen_token()))
    for i, (ids, ml) in enumerate(cases):
        assert got[i] == alone(model, ids, ml)
        assert requests[i].is_turn_complete()
        assert requests[i].get_finish_reason() in ("eos", "length")
    assert not engine.has_pending_requests()
    for r in requests:
        engine.remove_request(r)
        engine.remove_request(r)  # again: a no-op


def test_sampling_seed_per_request(model):
    engine = og.Engine(model)
    ids = prompt(8, 9)
    reqs = []
    for seed in (1, 2):
        r = og.Request(params(model, 24, do_sample=True, top_k=20, temperature=0.9, random_seed=seed))
        r.add_tokens(ids)
        engine.add_request(r)
        reqs.append(r)
    got = {0: [], 1: []}
    while request := engine.step():
        i = 0 if request is reqs[0] else 1
        while request.has_unseen_tokens():
            got[i].append(int(request.get_unseen_token()))
    for i, seed in enumerate((1, 2)):
        assert got[i] == alone(model, ids, 24, do_sample=True, top_k=20, temperature=0.9, random_seed=seed)


def test_producer_thread_and_removal(model):
    # continuous-batching.py's shape: requests added from a producer thread while the main thread steps; drained
    # and removed when their turn completes. Every second request is removed early instead.
    engine = og.Engine(model)
    lock = threading.Lock()
    cases = [(prompt(4 + i, 20 + i), 4 + i + 10) for i in range(8)]
    got, done = {}, set()
    pool = []

    def fill():
        for i, (ids, ml) in enumerate(cases):
            r = og.Request(params(model, ml))
            r.add_tokens(ids)
            r.set_opaque_data(i)
            with lock:
                pool.append(r)
                engine.add_request(r)

    producer = threading.Thread(target=fill)
    producer.start()
    while len(done) < len(cases):
        request = engine.step()
        if request is None:
            continue
        with lock:
            i = request.get_opaque_data()
            while request.has_unseen_tokens():
                got.setdefault(i, []).append(int(request.get_unseen_token()))
            if request.is_turn_complete() or (i % 2 and len(got[i]) >= 3):
                engine.remove_request(request)
                done.add(i)
    producer.join()
    for i, (ids, ml) in enumerate(cases):
        want = alone(model, ids, ml)
        assert got[i] == (want[: len(got[i])] if i % 2 else want)
    assert not engine.has_pending_requests()


def test_continue_with_next_turn(model):
    # model-qa.py's shape: one request, a turn per user message, continue_with after the first.
    engine = og.Engine(model)
    r = og.Request(params(model, 200))
    r.add_tokens(prompt(6, 30))
    r.add_tokens(prompt(4, 31))  # several add_tokens before the request is added add up
    engine.add_request(r)
    turns = []
    for turn in range(2):
        if turn:
            if r.get_finish_reason() != "eos":
                break  # the first turn used the whole length: nothing to continue
            r.continue_with(prompt(5, 32)[1:])
        tokens = []
        while ready := engine.step():
            while ready.has_unseen_tokens():
                tokens.append(int(ready.get_unseen_token()))
        turns.append(tokens)
    g = og.Generator(model, params(model, 200))
    g.append_tokens(np.concatenate([prompt(6, 30), prompt(4, 31)]))
    for turn, tokens in enumerate(turns):
        if turn:
            g.append_tokens(prompt(5, 32)[1:])
        want = []
        while not g.is_done():
            g.generate_next_token()
            want.append(int(g.get_next_tokens()[0]))
        assert tokens == want
    engine.remove_request(r)


def test_bad_use_raises(model):
    engine = og.Engine(model)
    with pytest.raises(og.OgxError, match="no tokens"):
        engine.add_request(og.Request(params(model, 32)))
    r = og.Request(params(model, 32))
    r.add_tokens([1, 5000])
    with pytest.raises(og.OgxError, match="out of range"):
        engine.add_request(r)
    p = og.GeneratorParams(model)
    p.set_search_options(num_beams=2)
    with pytest.raises(og.OgxError, match="num_beams"):
        og.Request(p)
    ok = og.Request(params(model, 16))
    ok.add_tokens(prompt(4, 40))
    engine.add_request(ok)
    with pytest.raises(og.OgxError, match="already added"):
        engine.add_request(ok)
    with pytest.raises(og.OgxError, match="no unseen tokens"):
        ok.get_unseen_token()
    with pytest.raises(og.OgxError, match="not complete"):
        ok.continue_with([5])
    assert ok.get_opaque_data() is None
    engine.remove_request(ok)
    assert ok.is_turn_complete() and ok.get_finish_reason() == "removed"
    assert engine.step() is None
