"""components/shell/live_settings.py: an operator's limits changed on a running app, token-guarded.

Every live key's reader sees a new value on its next call (the point of the list), the route answers only
with the token and only where one was given at start (never on a Space), and a bad change changes nothing.
"""

from __future__ import annotations

import threading

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from components.shell import live_settings, session_memory, upload_gate

TOKEN = "s3cret-token"


def _readers() -> dict:
    """Each live key -> (a value to set, a call that reads it now, what that call must then give)."""
    from backend.runtime import budget, clients, memory_budget
    from backend.train import store

    return {
        "TLAB_TIME_BUDGET_S": ("45", budget.default_seconds, 45.0),
        "TLAB_REQUEST_MEMORY_MB": ("300", memory_budget.share_mb, 300.0),
        "TLAB_TRAIN_SESSION_MB": ("400", lambda: store.get_store().max_bytes, 400 * 2**20),  # the store's own
        "TLAB_TRUST_FORWARDED": ("1", clients.trust_forwarded, True),
        "TLAB_UPLOAD_CLIENT_MB": ("32", upload_gate.client_cap, 32 * 2**20),
        "TLAB_UPLOAD_FOLDER_MB": ("64", upload_gate.folder_cap, 64 * 2**20),
    }


def test_every_live_key_has_a_reader_here():
    assert set(_readers()) == set(live_settings.LIVE)


@pytest.mark.parametrize("key", sorted(live_settings.LIVE))
def test_a_changed_key_is_read_on_the_next_call_and_null_puts_it_back(key, monkeypatch):
    value, read, expected = _readers()[key]
    monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.setitem(live_settings._AT_START, key, None)
    before = read()
    assert before != expected
    assert live_settings.apply({key: value})[key] == value
    assert read() == expected
    assert live_settings.apply({key: None})[key] is None
    assert read() == before


def test_the_upload_janitor_reads_the_folder_cap_on_each_pass(monkeypatch, tmp_path):
    caps, passes = [], threading.Event()

    def trim(folder, max_bytes):
        caps.append(max_bytes)
        if len(caps) >= 3:
            passes.set()

    monkeypatch.setattr(session_memory, "trim_upload_folder", trim)
    monkeypatch.setattr(session_memory, "trim_downloads", lambda *a: [])
    monkeypatch.setattr(session_memory, "upload_folder", lambda: tmp_path)
    monkeypatch.setenv("TLAB_UPLOAD_FOLDER_MB", "64")
    stop = threading.Event()
    janitor = session_memory.keep_uploads_bounded(every_s=0.02, stop=stop)
    try:
        while len(caps) < 1:
            passes.wait(0.01)
        monkeypatch.setenv("TLAB_UPLOAD_FOLDER_MB", "8")
        assert passes.wait(5)
    finally:
        stop.set()
        janitor.join(5)
    assert not janitor.is_alive()
    assert caps[0] == 64 * 2**20 and caps[-1] == 8 * 2**20


def test_bad_changes_change_nothing(monkeypatch):
    monkeypatch.setenv("TLAB_TIME_BUDGET_S", "120")
    for bad in ({"TLAB_TIME_BUDGET_S": "45", "TLAB_PUBLIC": "0"},  # not live: public mode is set at launch
                {"TLAB_TIME_BUDGET_S": True}, {"TLAB_TIME_BUDGET_S": "9" * 41}, ["TLAB_TIME_BUDGET_S"],
                {"TLAB_TIME_BUDGET_S": "45s"}, {"TLAB_TIME_BUDGET_S": -1}, {"TLAB_UPLOAD_CLIENT_MB": "nan"},
                {"TLAB_UPLOAD_FOLDER_MB": "inf"}, {"TLAB_TRUST_FORWARDED": "maybe"},
                {"TLAB_TIME_BUDGET_S": "45", "TLAB_TRUST_FORWARDED": "2"},  # one bad key: none is set
                {"TLAB_TIME_BUDGET_S": "1e308"}, {"TLAB_TIME_BUDGET_S": 86_401},  # over a day: past its upper bound
                {"TLAB_REQUEST_MEMORY_MB": 1e9}):
        with pytest.raises(ValueError):
            live_settings.apply(bad)
    assert live_settings.current()["TLAB_TIME_BUDGET_S"] == "120"


def _client(monkeypatch, token: str | None, space: bool = False) -> TestClient:
    if token is None:
        monkeypatch.delenv(live_settings.TOKEN_VAR, raising=False)
    else:
        monkeypatch.setenv(live_settings.TOKEN_VAR, token)
    if space:
        monkeypatch.setenv("SPACE_ID", "someone/lab")
    else:
        monkeypatch.delenv("SPACE_ID", raising=False)
    app = Starlette(routes=[Route("/{path:path}", lambda r: PlainTextResponse("gradio"), methods=["GET", "POST"])],
                    middleware=live_settings.middleware())
    return TestClient(app)


def test_the_route_answers_only_with_the_token(monkeypatch):
    monkeypatch.setenv("TLAB_TIME_BUDGET_S", "120")
    client = _client(monkeypatch, TOKEN)
    assert client.post(live_settings.PATH, json={"TLAB_TIME_BUDGET_S": "1"}).status_code == 403
    wrong = client.post(live_settings.PATH, json={"TLAB_TIME_BUDGET_S": "1"}, headers={"Authorization": "Bearer x"})
    assert wrong.status_code == 403 and "token" in wrong.json()["detail"]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get(live_settings.PATH, headers=auth).json()["TLAB_TIME_BUDGET_S"] == "120"
    ok = client.post(live_settings.PATH, json={"TLAB_TIME_BUDGET_S": 45}, headers=auth)
    assert ok.status_code == 200 and ok.json()["TLAB_TIME_BUDGET_S"] == "45"
    refused = client.post(live_settings.PATH, json={"TLAB_QUEUE_MAX": 1}, headers=auth)
    assert refused.status_code == 400 and "not a live setting" in refused.json()["detail"]
    assert client.post(live_settings.PATH, content=b"{" * 5000, headers=auth).status_code == 413
    nested = client.post(live_settings.PATH, content=b"[" * 2000 + b"]" * 2000, headers=auth)
    assert nested.status_code == 400 and "JSON object" in nested.json()["detail"]  # not a 500 with a traceback
    for malformed in (b"{not json", b"\xff\xfe", b'"TLAB_TIME_BUDGET_S"'):
        assert client.post(live_settings.PATH, content=malformed, headers=auth).status_code == 400
    assert client.get("/anything").text == "gradio"  # every other path is the app's


@pytest.mark.parametrize("token, space", [(None, False), ("", False), (TOKEN, True)])
def test_no_route_without_a_token_or_on_a_space(monkeypatch, token, space):
    client = _client(monkeypatch, token, space)
    assert live_settings.middleware() == []
    answer = client.post(live_settings.PATH, json={"TLAB_TIME_BUDGET_S": "1"},
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.text == "gradio"  # the app's own answer: nothing here changed a setting
