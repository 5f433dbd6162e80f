"""The one build-once cache (backend/runtime/once.py): one build per key under concurrency, nothing kept when a
build raises, and beyond its bound the first built goes first, with its per-key lock."""

import threading
import time

import pytest

from backend.runtime.once import BuildOnce


def test_two_callers_build_a_key_once():
    once, started = BuildOnce(), threading.Event()

    def slow():
        started.set()
        time.sleep(0.05)
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(once.get("k", slow))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert once.builds == 1 and len({id(v) for v, _ in got}) == 1 and sorted(now for _, now in got) == [False] * 3 + [True]


def test_a_failed_build_keeps_nothing():
    once = BuildOnce()
    with pytest.raises(RuntimeError):
        once.get("k", lambda: (_ for _ in ()).throw(RuntimeError("no")))
    assert "k" not in once and once.get("k", lambda: 1) == (1, True)


def test_beyond_the_bound_the_first_built_goes_with_its_lock():
    once = BuildOnce(max_entries=2)
    for key in "abc":
        once.get(key, lambda key=key: key.upper())
    assert "a" not in once and once.peek("b") == "B" and once.peek("c") == "C" and len(once) == 2
    assert set(once._locks) == {"b", "c"}
    once.get("b", lambda: "again")  # a hit does not make it newer: first built, first dropped
    once.get("d", lambda: "D")
    assert "b" not in once and set(once._locks) == {"c", "d"}
