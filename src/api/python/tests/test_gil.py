"""The GIL is released while the library works: Python threads run during a long forward pass, and several
Python threads generate concurrently with one model."""
import threading
import time

import numpy as np

import ogx as og


def test_other_threads_run_during_a_forward_pass(model_dir):
    model = og.Model(model_dir)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=4096)
    generator = og.Generator(model, params)
    prompt = np.random.default_rng(0).integers(3, 2048, 4000, dtype=np.int32)
    window = {}

    def work():
        window["start"] = time.perf_counter()
        generator.append_tokens(prompt)  # one long call into the library
        window["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    duration = window["end"] - window["start"]
    inside = [t for t in ticks if window["start"] < t < window["end"]]
    # Holding the GIL would freeze this loop for the whole call; released, it keeps ticking throughout.
    assert duration > 0.02
    assert len(inside) > 100, "main thread ran %d times during a %.3f s call" % (len(inside), duration)
    assert inside[-1] - inside[0] > 0.5 * duration


def test_threads_generate_concurrently_with_one_model(model_dir):
    model = og.Model(model_dir)

    def run(prompt):
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(prompt) + 12, min_length=len(prompt) + 12, do_sample=False)
        generator = og.Generator(model, params)
        generator.append_tokens(prompt)
        while not generator.is_done():
            generator.generate_next_token()
        return generator.get_sequence(0).tolist()

    prompts = [[1, 2, 3], [1, 50, 60, 70], [1, 999], [1, 4, 4, 4, 4]]
    expected = [run(p) for p in prompts]
    results = [None] * len(prompts)

    def worker(i):
        results[i] = run(prompts[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
