"""Concurrent short requests share one forward, and each gets its own rows or its own error."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

from backend.engines.embedding import batching
from backend.runtime import tokenizer_lock
from backend.engines.embedding.vectors import _embed, embed_texts
from tests.helpers.tiny_models import minilm_tokenizer, tiny_bert


def _blocking_run(release: threading.Event, calls: list):
    def run(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        if len(calls) == 1:
            release.wait(10)  # the first forward is "slow": the others arrive meanwhile
        return np.array([[len(t)] for t in texts], dtype=np.float32)

    return run


def _wait_until(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def _submit_all(c: batching.Coalescer, requests: list[list[str]], out: dict, errors: dict, calls: list):
    """Each request on its own thread, in order: the first is taken alone (its forward has started),
    then each later one is queued before the next starts, however slow the box."""
    threads = []
    for i, texts in enumerate(requests):
        def go(i=i, texts=texts):
            try:
                out[i] = c.submit(texts)
            except Exception as exc:  # noqa: BLE001 - the test reads it
                errors[i] = exc

        t = threading.Thread(target=go)
        t.start()
        threads.append(t)
        if i == 0:
            _wait_until(lambda: len(calls) == 1)  # the first request is taken alone
        else:
            _wait_until(lambda i=i: c._queue.qsize() == i)  # queued behind the running forward, in order
    return threads


def test_requests_that_wait_during_a_forward_share_the_next_one():
    release, calls = threading.Event(), []
    c = batching.Coalescer(_blocking_run(release, calls), max_texts=16)
    requests = [["a"], ["bb", "ccc"], ["dddd"], ["eeeee"], ["ffffff", "g"]]
    out, errors = {}, {}
    threads = _submit_all(c, requests, out, errors, calls)  # all four late requests queued behind the forward
    release.set()
    for t in threads:
        t.join(10)
    assert not errors
    assert (c.forwards, c.requests, c.largest) == (2, 5, 4)
    assert calls == [["a"], ["bb", "ccc", "dddd", "eeeee", "ffffff", "g"]]
    for i, texts in enumerate(requests):  # each caller gets its own rows, in its order
        assert out[i][:, 0].tolist() == [len(t) for t in texts]
    c.close()


def test_a_forward_takes_at_most_max_texts_and_the_rest_wait_for_the_next():
    release, calls = threading.Event(), []
    c = batching.Coalescer(_blocking_run(release, calls), max_texts=3)
    requests = [["a"], ["b", "c"], ["d"], ["e"], ["f"]]
    out, errors = {}, {}
    threads = _submit_all(c, requests, out, errors, calls)
    release.set()
    for t in threads:
        t.join(10)
    assert not errors
    assert [len(x) for x in calls] == [1, 3, 2]
    assert c.forwards == 3 and c.requests == 5
    c.close()


def test_an_error_reaches_every_caller_of_its_forward_and_the_next_forward_works():
    calls = []

    def run(texts):
        calls.append(texts)
        if "boom" in texts:
            raise ValueError("forward failed")
        return np.ones((len(texts), 1), dtype=np.float32)

    c = batching.Coalescer(run, max_texts=8)
    with pytest.raises(ValueError, match="forward failed"):
        c.submit(["boom"])
    assert c.submit(["fine", "too"]).shape == (2, 1)
    c.close()


def test_embed_texts_coalesced_rows_match_the_direct_forward(monkeypatch):
    monkeypatch.setenv("TLAB_BATCH_MAX", "16")
    tok = minilm_tokenizer()
    model = tiny_bert(vocab_size=tok.vocab_size).eval()
    texts = ["a short one", "a somewhat longer sentence about tokens and batches", "x"]
    direct = _embed(texts, model, tok, 64, None, 64)
    results: dict[int, np.ndarray] = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, embed_texts([texts[i]], model, tok)))
               for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for i in range(len(texts)):
        np.testing.assert_allclose(results[i][0], direct[i], atol=1e-5)
    live = batching._COALESCERS.get(model)
    assert live and sum(c.requests for c in live.values()) == 3


def test_batching_off_with_batch_max_one_and_the_coalescer_dies_with_its_model(monkeypatch):
    monkeypatch.setenv("TLAB_BATCH_MAX", "1")
    assert not batching.enabled()
    monkeypatch.setenv("TLAB_BATCH_MAX", "16")
    assert batching.enabled()
    tok = minilm_tokenizer()
    model = tiny_bert(vocab_size=tok.vocab_size).eval()
    embed_texts(["hello"], model, tok)
    (c,) = batching._COALESCERS[model].values()
    thread = c._thread
    del model
    gc.collect()
    thread.join(5)
    assert not thread.is_alive()


def test_one_tokenizer_called_from_many_threads_with_different_settings_never_mixes_them():
    """Without the lock, padding set by one thread is undone by another between set and encode."""
    tokenizer_lock.thread_safe_tokenizers()
    tok = minilm_tokenizer()
    texts = ["short", "a much longer sentence that needs padding in a batch", "mid length text"]
    errors: list[Exception] = []

    def padded():
        for _ in range(400):
            try:
                enc = tok(texts, padding=True, truncation=True, max_length=32, return_tensors="pt")
                assert enc["input_ids"].shape[0] == 3
            except Exception as exc:  # noqa: BLE001 - the test collects them
                errors.append(exc)

    def plain():
        for _ in range(400):
            tok(texts, add_special_tokens=True)  # no padding: resets the shared Rust settings

    threads = [threading.Thread(target=f) for f in (padded, plain, padded, plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
