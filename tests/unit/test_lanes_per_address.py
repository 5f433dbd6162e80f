"""The long lane's places are shared per client (an address), not per session: one client
with a session per request filled the lane. Admission binds each session to its request's address."""

from __future__ import annotations

import types

import pytest

from backend.runtime import clients
from components.shell import lanes
from components.shell.lanes import LONG_WAITING_MAX, admit, client_long_max, lane_refusal
from components.shell.session import session_of

pytestmark = pytest.mark.unit

LONG = types.SimpleNamespace(concurrency_id="long")
SHORT = types.SimpleNamespace(concurrency_id="model")


@pytest.fixture(autouse=True)
def fresh_bindings(monkeypatch):
    monkeypatch.setenv("TLAB_TRUST_FORWARDED", "1")
    monkeypatch.setenv("TLAB_PUBLIC", "1")  # shares per client are a public server's (on your own: all of it)
    clients.clear()
    yield
    clients.clear()


def _request(forwarded: str, host: str = "127.0.0.1", session: str | None = None):
    return types.SimpleNamespace(client=types.SimpleNamespace(host=host), headers={"x-forwarded-for": forwarded},
                                 session_hash=session)


def test_a_client_gets_its_share_of_long_places_whatever_number_of_sessions():
    n = client_long_max()
    assert 1 <= n < LONG_WAITING_MAX
    events = []
    for i in range(20):  # twenty sessions of one address, each asking for one long job
        why, _ = admit(events, f"a{i}", LONG, [], _request("203.0.113.1"))
        if why is None:
            events.append((f"a{i}", LONG, [], not events, None))
    assert len(events) == n  # the rest were refused
    why = lane_refusal(events, "a19", LONG, [])
    assert "Your address already has" in why and f"gets {n} of the long lane's places" in why
    assert lane_refusal(events, "a19", SHORT, []) is None  # short work is never refused
    assert admit(events, "b0", LONG, [], _request("198.51.100.7"))[0] is None  # another address gets a place


def test_untrusted_forwarded_addresses_are_one_client(monkeypatch):
    monkeypatch.setenv("TLAB_TRUST_FORWARDED", "0")
    admit([], "x1", SHORT, [], _request("203.0.113.1"))
    admit([], "x2", SHORT, [], _request("198.51.100.7"))
    assert clients.client_of("x1") == clients.client_of("x2") == "127.0.0.1"  # the socket decides


def test_a_handler_binds_its_session_to_its_client():
    assert session_of(_request("203.0.113.5", session="page-1"), "the model") == "page-1"
    assert clients.client_of("page-1") == "203.0.113.5"


def test_the_share_follows_the_setting(monkeypatch):
    monkeypatch.setenv("TLAB_CLIENT_SHARE", "1")
    assert lanes.client_long_max() == LONG_WAITING_MAX + 1
    monkeypatch.setenv("TLAB_CLIENT_SHARE", "0.01")
    assert lanes.client_long_max() == 1


def test_the_queue_door_hands_admission_the_request():
    import asyncio

    import gradio as gr

    from components.shell import gradio_patches as gp

    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(lambda x: x, box, box, api_name="echo", concurrency_id="long")
    demo.queue()
    demo._queue.blocks = demo
    seen = []

    async def original(body, request, username):
        return True, "event-1"

    demo._queue.push = original
    gp.admit_at_queue_door(demo, lambda *args: (seen.append(args[-1]), (None, None))[1], with_request=True)
    request = _request("203.0.113.9")
    body = types.SimpleNamespace(session_hash="s1", data=["x"], fn_index=0, trigger_id=None)
    assert asyncio.run(demo._queue.push(body, request, None)) == (True, "event-1")
    assert seen == [request]


def test_on_a_server_of_your_own_one_address_may_use_every_place(monkeypatch):
    monkeypatch.setenv("TLAB_PUBLIC", "0")
    monkeypatch.delenv("TLAB_CLIENT_SHARE", raising=False)
    assert client_long_max() == LONG_WAITING_MAX + 1  # a class behind one address, a test suite on loopback
