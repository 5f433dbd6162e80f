"""A request body is bounded before anything parses it (a readable 413), and a body that is not what the route
takes is answered with a readable 400 instead of pydantic's 422 dump."""

from __future__ import annotations

from fastapi import FastAPI
from pydantic import BaseModel
from starlette.testclient import TestClient

from components.shell import body_gate


class Body(BaseModel):
    data: list


def _client(monkeypatch, cap_mb: str = "1") -> TestClient:
    monkeypatch.setenv("TLAB_SEARCH_MAX_MB", cap_mb)
    app = FastAPI(middleware=body_gate.middleware(), exception_handlers=body_gate.exception_handlers())
    seen = []

    @app.post("/gradio_api/call/echo")
    def echo(body: Body):
        seen.append(len(body.data))
        return {"n": len(body.data)}

    @app.post("/gradio_api/upload")
    async def upload():
        return {"upload": "the upload gate's own route"}

    client = TestClient(app)
    client.seen = seen
    return client


def test_a_body_over_the_cap_is_refused_before_it_is_read(monkeypatch):
    client = _client(monkeypatch)
    cap = body_gate.body_cap()
    assert cap == int(2**20 * body_gate.ESCAPING) + body_gate.SLACK
    big = b'{"data": ["' + b"x" * cap + b'"]}'
    r = client.post("/gradio_api/call/echo", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "at most 2.5 MB" in r.json()["detail"] and not client.seen
    ok = client.post("/gradio_api/call/echo", json={"data": ["x" * 1000]})
    assert ok.status_code == 200 and client.seen == [1]
    assert client.post("/gradio_api/upload", content=big).status_code == 200  # the upload gate bounds uploads


def test_a_chunked_body_is_cut_at_the_cap(monkeypatch):
    client = _client(monkeypatch)

    def chunks():
        for _ in range(8):
            yield b"x" * (2**20)

    r = client.post("/gradio_api/call/echo", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code >= 400 and not client.seen


def test_a_malformed_body_gets_a_readable_400(monkeypatch):
    client = _client(monkeypatch)
    for body, words in [(b"{not json", "not valid JSON"), (b'{"datum": []}', "data is missing"),
                        (b'{"data": 3}', "wrong type")]:
        r = client.post("/gradio_api/call/echo", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400 and words in r.json()["detail"], (body, r.text)
        assert "pydantic" not in r.text and "loc" not in r.text
