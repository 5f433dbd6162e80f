"""Shares per client (an address), not per session, and reservations that expire by age.
The bookkeeping of `ClientStore`, the address of a request, and the stores that use them."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest
import torch

from backend.runtime.client_store import ClientStore
from backend.runtime import clients
from backend.runtime.errors import InputError

pytestmark = pytest.mark.unit
MB = 2**20


@pytest.fixture(autouse=True)
def fresh_bindings():
    clients.clear()
    yield
    clients.clear()


@dataclass
class Box:
    nbytes: int = 0
    running: bool = False


def _store(**kw) -> ClientStore:
    args = dict(share=0.25, keep_s=100.0, max_age_s=300.0, max_entries=16, max_bytes=400 * MB,
                size_of=lambda b: b.nbytes, busy=lambda b: b.running, describe=lambda b: "box")
    args.update(kw)
    return ClientStore(Box, **args)


def _hold(store, session, nbytes, now):
    """`session` holds an item of `nbytes`, made and last used at `now` (a clock of the test's own)."""
    store._entries[session] = (Box(nbytes), now)
    store.renew(session, now)


# ------------------------------------------------------------------ the address of a request
@pytest.mark.parametrize("host,forwarded,trusted,expected", [
    ("127.0.0.1", "203.0.113.9", True, "203.0.113.9"),  # trusted: the address the proxy saw
    # the proxy appends what it saw to what the caller wrote: the caller's entries never name it
    ("127.0.0.1", "203.0.113.9, 198.51.100.4", True, "198.51.100.4"),
    ("127.0.0.1", "203.0.113.9", False, "127.0.0.1"),  # not trusted: a header is the caller's word
    ("127.0.0.1", "not an address", True, "127.0.0.1"),
    ("127.0.0.1", "", True, "127.0.0.1"),
    ("2001:db8:1:2:3:4:5:6", None, False, "2001:db8:1:2::/64"),  # one host owns a whole /64
    ("::ffff:198.51.100.7", None, False, "198.51.100.7"),
    (None, None, False, None),
])
def test_the_client_is_the_address(host, forwarded, trusted, expected):
    assert clients.address(host, forwarded, trusted) == expected


def test_a_caller_cannot_mint_clients_by_writing_the_header(monkeypatch):
    monkeypatch.delenv("TLAB_PROXY_HOPS", raising=False)
    seen = {clients.address("10.0.0.1", f"192.0.2.{i}, 198.51.100.4", True) for i in range(20)}
    assert seen == {"198.51.100.4"}
    monkeypatch.setenv("TLAB_PROXY_HOPS", "2")  # two trusted proxies: the outer one saw the caller
    assert clients.address("10.0.0.1", "192.0.2.1, 198.51.100.4, 10.9.9.9", True) == "198.51.100.4"
    assert clients.address("10.0.0.1", "10.9.9.9", True) == "10.0.0.1"  # fewer entries than proxies


def test_trust_in_the_forwarded_address_is_a_setting(monkeypatch):
    monkeypatch.delenv("TLAB_TRUST_FORWARDED", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert not clients.trust_forwarded()
    monkeypatch.setenv("SPACE_ID", "someone/lab")
    assert clients.trust_forwarded()  # on a Space the platform's proxy sets it
    monkeypatch.setenv("TLAB_TRUST_FORWARDED", "0")
    assert not clients.trust_forwarded()
    request = SimpleNamespace(client=SimpleNamespace(host="10.1.1.1"), headers={"x-forwarded-for": "198.51.100.2"})
    assert clients.of_request(request) == "10.1.1.1"
    monkeypatch.setenv("TLAB_TRUST_FORWARDED", "1")
    assert clients.of_request(request) == "198.51.100.2"


def test_sessions_of_one_client_and_unbound_sessions():
    clients.bind("s1", "A")
    clients.bind("s2", "A")
    assert clients.client_of("s1") == clients.client_of("s2") == "A"
    assert clients.client_of("lonely") == "session:lonely"  # a script's session is its own client
    assert sorted(clients.sessions_of("A")) == ["s1", "s2"]
    with clients.serving("A"):
        assert clients.same_client("s1") and not clients.same_client("lonely")
    assert clients.same_client("lonely")  # outside a request nobody is refused


# ------------------------------------------------------------------ shares
def test_one_client_holds_its_share_whatever_number_of_sessions():
    store = _store()
    for s in ("a1", "a2", "a3", "b1"):
        clients.bind(s, "A" if s.startswith("a") else "B")
    _hold(store, "a1", 90 * MB, now=0.0)
    why = store.client_refusal("a2", 90 * MB, "model", "the memory for models", now=10.0)
    assert why is not None and "Your address already holds 1 model" in why
    assert "90 MB of its 100 MB share" in why and "frees up in 90 s" in why and "25%" in why
    assert store.client_refusal("b1", 90 * MB, "model", "the memory for models", now=10.0) is None
    assert store.could_fit("b1", 90 * MB, now=10.0)


def test_a_running_job_counts_against_its_client():
    store = _store()
    clients.bind("a1", "A")
    clients.bind("a2", "A")
    store.get("a1").running = True
    why = store.client_refusal("a2", 90 * MB, "model", "the memory for models", now=1.0)
    assert why is not None and "running model job of yours ends" in why


def test_a_client_makes_room_from_its_own_unreserved_items():
    store = _store()
    clients.bind("a1", "A")
    clients.bind("a2", "A")
    _hold(store, "a1", 90 * MB, now=0.0)
    assert store.client_refusal("a2", 90 * MB, "model", "models", now=150.0) is None  # a1 idle past keep_s
    assert store.peek("a1") is None or store.peek("a1").nbytes == 0


def test_places_are_shared_per_client_too():
    store = _store(max_bytes=None, max_entries=8)  # share: 2 places
    for s in ("a1", "a2", "a3"):
        clients.bind(s, "A")
    _hold(store, "a1", 1, now=0.0)
    _hold(store, "a2", 1, now=0.0)
    assert "holds 2 models" in store.client_refusal("a3", 1, "model", "models", now=1.0)


# ------------------------------------------------------------------ reservations expire by age
def test_a_model_kept_alive_by_calls_still_expires_by_age():
    store = _store(share=1.0)
    _hold(store, "old", 300 * MB, now=0.0)
    for t in (90.0, 180.0, 270.0):  # used every 90 s: never idle for keep_s (100 s)
        store._entries["old"] = (store.peek("old"), t)
    assert not store.could_fit("new", 200 * MB, now=280.0)  # 280 s old: still reserved
    assert store.frees_at("old", now=280.0) == pytest.approx(300.0)
    assert store.could_fit("new", 200 * MB, now=301.0)  # past max_age_s: others may take its room
    assert store.room_for("new", 200 * MB, now=301.0) and "old" not in store


def test_the_full_store_says_when_it_frees_up():
    store = _store(share=1.0)
    _hold(store, "a", 390 * MB, now=0.0)
    msg = store.full_message("b", "model", "memory for models", now=40.0)
    assert "memory for models is full" in msg and "first reservation ends in 60 s" in msg


# ------------------------------------------------------------------ the stores
def test_the_train_store_refuses_a_clients_extra_session_and_admits_another_client():
    from backend.train.store import Trained, TrainStore

    store = TrainStore(max_bytes=800 * MB, keep_s=900.0, share=0.25)  # 200 MB a client: a1 and a2 both start
    for s in ("a1", "a2", "a3", "b1"):
        clients.bind(s, "A" if s.startswith("a") else "B")
    for s in ("a1", "a2"):
        store.begin(s)
        t = Trained(labels=["x"], dataset={"name": "d"}, checkpoint="c", override=None)
        t.weights = {"w": torch.zeros(25 * MB // 4)}  # 25 MB of float32
        store.end(s, t)
    store._sessions.share = 50 / 800  # now 50 MB a client: A's 2 x 25 MB (+ a run's 100 MB guess) are over it
    with pytest.raises(InputError, match="Your address already holds 2 trained models"):
        store.begin("a3")
    assert store.begin("b1").running  # another address trains


def test_a_session_model_name_works_only_for_its_client():
    from backend.scratch.gpt_store import GptStore, Model

    store = GptStore(keep_s=900.0)
    clients.bind("a1", "A")
    store.begin("a1", 1000)
    model = Model(model=SimpleNamespace(parameters=lambda: []), tokenizer=None, info={})
    store.end("a1", model)
    with clients.serving("A"):
        assert store.by_name(model.name) is model
    with clients.serving("B"):
        assert store.by_name(model.name) is None
    assert store.by_name(model.name) is model  # a script (no request) is nobody to refuse
