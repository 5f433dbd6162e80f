"""Fair sharing of the private room: strangers cannot flush other visitors' work.

The promise (backend/runtime/sessions.py): an item (a private index, a trained model) used in the
last `keep_s` seconds is never evicted for anyone else, whatever number of new sessions arrive;
a newcomer who finds the room full of such items is refused at once with a readable message;
cheap sessions (nothing private) go first; among evictable items the longest idle goes first;
a visitor whose item was evicted is told why, not "no item yet".
"""

from __future__ import annotations

import time

import pytest

from backend.runtime.sessions import GONE_IDLE, GONE_ROOM, SessionStore
from backend.runtime.errors import InputError
from backend.search import corpora as C
from backend.search.index import IndexSettings
from backend.search.service import Embedder, SearchService
from backend.train.store import Trained, TrainStore
from tests.tiny_models import minilm_tokenizer, tiny_bert


class Box:
    """A stand-in item: its size is what `size_of` reads."""

    def __init__(self, size: int = 0):
        self.size = size


def _store(**kw) -> SessionStore[Box]:
    return SessionStore(Box, size_of=lambda b: b.size, describe=lambda b: f"box of {b.size}", **kw)


def _hold(store: SessionStore[Box], key: str, size: int) -> None:
    store.get(key).size = size
    store.evict(keep=key)


# ------------------------------------------------------------------ the policy, on plain boxes
def test_fresh_sessions_drop_each_other_not_a_held_item():
    store = _store(max_entries=8, keep_s=900)
    _hold(store, "owner", 10)
    for i in range(66):
        store.get(f"fresh-{i}")  # a /search or /predict_trained from a new session: nothing private
    assert store.peek("owner").size == 10 and len(store) == 8
    assert store.why_gone("fresh-0") is None  # cheap sessions leave no tombstone: they lost nothing


def test_a_full_room_refuses_the_newcomer_and_keeps_every_recent_item():
    store = _store(max_entries=64, max_bytes=300, keep_s=900)
    for key in ("a", "b", "c"):
        assert store.room_for(key, 100)
        _hold(store, key, 100)
    for i in range(66):
        assert store.room_for(f"new-{i}", 100) is False
    assert [store.peek(k).size for k in "abc"] == [100, 100, 100]
    assert store.room_for("a", 100)  # a holder may replace its own item by one of the same size


def test_idle_items_make_room_longest_idle_first_and_are_told_why():
    store = _store(max_entries=64, max_bytes=300, keep_s=900)
    t0 = time.monotonic()
    for key in ("a", "b", "c"):
        _hold(store, key, 100)
    store._entries["a"] = (store.peek("a"), t0 - 2000)  # a: idle 33 min, b: idle 20 min, c: now
    store._entries["b"] = (store.peek("b"), t0 - 1200)
    assert store.room_for("new", 100, now=t0)
    assert store.peek("a") is None and store.peek("b").size == 100  # only as much as needed
    assert store.why_gone("a") == (GONE_ROOM, "box of 100")
    store.forget_gone("a")
    assert store.why_gone("a") is None


def test_among_equally_idle_items_the_largest_goes_first():
    store = _store(max_entries=64, max_bytes=300, keep_s=0)
    _hold(store, "small", 50)
    _hold(store, "big", 200)
    t = time.monotonic() - 10
    store._entries["small"] = (store.peek("small"), t)
    store._entries["big"] = (store.peek("big"), t)
    assert store.room_for("new", 100)
    assert store.peek("big") is None and store.peek("small").size == 50


def test_idle_timeout_still_applies_and_is_named():
    store = _store(idle_s=100, max_entries=64, keep_s=900)
    _hold(store, "a", 10)
    store.get("cheap")
    gone = store.evict(now=time.monotonic() + 1000)
    assert set(gone) == {"a", "cheap"}
    assert store.why_gone("a") == (GONE_IDLE, "box of 10") and store.why_gone("cheap") is None


def test_a_closed_page_leaves_no_tombstone_and_tombstones_are_bounded():
    from backend.runtime import sessions

    store = _store(max_entries=1, keep_s=0)
    _hold(store, "a", 1)
    store.drop("a")
    assert store.why_gone("a") is None
    for i in range(sessions.MAX_TOMBSTONES + 50):
        _hold(store, f"k{i}", 1)  # each newcomer pushes the previous item out: a tombstone each
    assert len(store._gone) == sessions.MAX_TOMBSTONES


def test_could_fit_counts_only_what_cannot_be_evicted():
    store = _store(max_entries=64, max_bytes=300, keep_s=900)
    _hold(store, "recent", 200)
    assert store.could_fit("new", 100) and not store.could_fit("new", 101)
    assert store.could_fit("new", 300, now=time.monotonic() + 1000)  # recent is idle by then
    assert len(store) == 1  # asking evicted nothing


# ------------------------------------------------------------------ search indexes
@pytest.fixture(scope="module")
def embedder():
    return Embedder(tiny_bert(seed=0), minilm_tokenizer(), "tiny-bert-test", {"checkpoint": "tiny"})


def _corpus(tag: str, n: int = 10):
    return C.documents_to_corpus(tag, [("", f"{tag} passage number {i}") for i in range(n)])


def test_66_fresh_sessions_cannot_evict_a_visitors_private_index(tmp_path, embedder):
    """The issue's attack: 66 /search calls from fresh sessions flushed every private index."""
    one = 10 * 32 * 4 * 2
    svc = SearchService(tmp_path, persist=False, max_sessions=64, max_private_bytes=2 * one, keep_s=900)
    svc.build("alice", _corpus("alice"), IndexSettings("flat"), embedder)
    svc.build("bob", _corpus("bob"), IndexSettings("flat"), embedder)
    glossary = _corpus("glossary", 5)
    for i in range(66):  # a first /search builds (or reuses) the shared index: nothing private
        svc.build(f"stranger-{i}", glossary, IndexSettings("flat"), embedder, shared=True)
    for i in range(66):  # a private corpus finds the room full: refused before any embedding
        with pytest.raises(InputError, match="memory for private indexes is full"):
            svc.build(f"paster-{i}", _corpus(f"p{i}"), IndexSettings("flat"), embedder)
    assert svc.search("alice", "alice passage", 1, embedder)["results"][0]["text"].startswith("alice")
    assert svc.search("bob", "bob passage", 1, embedder)["corpus"] == "bob"
    assert svc.session_count() <= 64


def test_an_evicted_visitor_is_told_why_and_gets_no_silent_glossary(tmp_path, embedder):
    one = 10 * 32 * 4 * 2
    svc = SearchService(tmp_path, persist=False, max_private_bytes=one, keep_s=900)
    svc.build("alice", _corpus("alice"), IndexSettings("flat"), embedder)
    key_time = svc._sessions._entries["alice"]
    svc._sessions._entries["alice"] = (key_time[0], time.monotonic() - 1000)  # idle past keep_s
    svc.build("bob", _corpus("bob"), IndexSettings("flat"), embedder)
    with pytest.raises(InputError, match=r"your private index of 'alice' \(10 passages\) was removed to make room"):
        svc.search("alice", "alice", 1, embedder)
    assert "build one first" in svc.gone_message("alice")
    svc.build("alice", _corpus("alice"), IndexSettings("flat"), embedder, shared=True)
    assert svc.gone_message("alice") is None  # a new index: the old story is over


# ------------------------------------------------------------------ trained models
def _trained(mb: int) -> Trained:
    import torch

    return Trained(labels=["a", "b"], dataset={"name": "emotion"}, checkpoint="c", override=None,
                   weights={"w": torch.zeros(mb * 1024 * 1024 // 4)}, best="finetune")


def test_34_predict_calls_from_fresh_sessions_drop_no_trained_model():
    store = TrainStore(max_sessions=32, max_bytes=8 * 1024 * 1024, keep_s=900)
    for sid in ("a", "b"):
        store.begin(sid)
        store.end(sid, _trained(1))
    for i in range(34):
        with pytest.raises(InputError, match="No trained model in this session yet"):
            store.trained(f"fresh-{i}")
    assert store.trained("a") is not None and store.trained("b") is not None
    assert "fresh-0" not in store  # asking made no session


def test_a_new_run_is_refused_when_the_room_is_full_of_recent_models():
    store = TrainStore(max_sessions=32, max_bytes=2 * 1024 * 1024, keep_s=900)
    for sid in ("a", "b"):
        store.begin(sid)
        store.end(sid, _trained(1))
    with pytest.raises(InputError, match="memory for trained models is full"):
        store.begin("stranger")
    assert store.bytes_used() == 2 * 1024 * 1024


def test_an_evicted_model_is_explained():
    store = TrainStore(max_sessions=32, max_bytes=1024 * 1024, keep_s=0)
    store.begin("a")
    store.end("a", _trained(1))
    store.begin("b")
    store.end("b", _trained(1))  # over budget, keep_s 0: a's model goes
    with pytest.raises(InputError, match="classifier trained on 'emotion' was removed to make room"):
        store.trained("a")
    store.begin("a")
    store.end("a", _trained(1))
    assert store.trained("a") is not None
