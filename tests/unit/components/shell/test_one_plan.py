"""One plan per request: with a generation server configured, a /summarize request asks the server
gate (`hub.server_models.gate`) once, when it joins the queue; the handler and the backend use that
plan. A real Gradio queue in this process (the shell's admission patch on it), the real Pipelines
handler, the fake OpenAI-compatible server; no weights are loaded (the server writes the summary)."""

from __future__ import annotations

import socket

import gradio as gr
import pytest

from backend.hub import server_models
from backend.runtime.plan import Plan
from components.pipelines import handlers
from components.shell import admit_fairly, server_lane
from components.shell import plans
from components.shell.endpoint import served
from components.shell.guard import guard
from tests.helpers.fake_server import TEXT, no_weights_here
from tests.helpers.fake_server import serving_fake


@pytest.fixture(scope="module")
def tok():
    from backend import hub

    return hub.tokenizer("summarization")[0]


@pytest.fixture
def fake(tok, monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "local")
    monkeypatch.delenv("TLAB_MODEL_SUMMARIZATION", raising=False)
    yield from serving_fake(tok, monkeypatch)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_summarize_request_asks_the_server_gate_once(fake, monkeypatch):
    from gradio_client import Client

    no_weights_here(monkeypatch)
    gates, real_gate = [], server_models.gate

    def counted(*args, **kwargs):
        gates.append(args)
        return real_gate(*args, **kwargs)

    monkeypatch.setattr(server_models, "gate", counted)
    with gr.Blocks() as demo:
        inputs = [gr.Textbox(), gr.Number(), gr.Number(), gr.Number(), gr.Textbox(), gr.Textbox()]
        out = [gr.Markdown(), gr.Textbox(), gr.HTML(), gr.Textbox(), gr.Textbox(), gr.Plot(), gr.Markdown(),
               gr.JSON()]  # as the Pipelines tab wires them
        gr.Button().click(served(handlers.run_summarize, handlers._summary_plan), inputs, out, api_name="summarize",
                          **server_lane())  # the handler as the tab declares it (its planner included)
    guard(demo)
    demo.queue()
    admit_fairly(demo)
    demo.launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True)
    try:
        result = Client(demo.local_url, verbose=False).predict(TEXT, 16, 2, 0, "", "", api_name="/summarize")
    finally:
        demo.close()
    r = result[-1]
    assert r["summary"] == "Paris is lovely" and r["engine"]["kind"] != "in-process"  # the server wrote it
    assert len(gates) == 1, gates  # admission asked; the handler and the backend used its plan


def test_a_call_outside_the_queue_is_planned_where_it_runs(monkeypatch):
    asked = []
    monkeypatch.setattr(handlers.pipelines, "plan", lambda *a: asked.append(a) or Plan(long=True))
    assert plans.admitted() is None
    assert plans.current(handlers._summary_plan, ("text", 60, 10, "2", "", "  ")).long
    assert asked == [("summarize", "  ", {"num_beams": 2})]


def test_a_planner_that_trips_on_junk_leaves_the_refusal_to_the_handler():
    def planner(args):
        raise ValueError("junk")

    fn = plans.planned(lambda *a: None, planner)
    assert plans.plan_of(fn, ["x"]) is None and plans.plan_of(lambda: None, []) is None


def test_a_decode_request_is_planned_once_and_the_backend_uses_that_plan(monkeypatch, tmp_path):
    """/decode with a server: admission plans it (`decoding.plan`: may the server run it?); the
    backend then only looks the server up (`remote_generation.route`), never plans again (`remote.plan`)."""
    from gradio_client import Client

    from backend.engines.server import generation as remote
    from components.decoding import handlers as decoding_handlers
    from components.shell import DECODE_LANE
    from tests.helpers.tiny_models import save_tiny, smollm2_tokenizer, tiny_llama
    from tests.helpers.fake_server import MODEL

    tok = smollm2_tokenizer()
    folder = save_tiny(tiny_llama(seed=0, pad_token_id=tok.eos_token_id), tok, tmp_path / "tiny-llama")
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folder))
    from backend import decoding

    asked, planned_again = [], []
    real_decoding_plan, real_plan = decoding.plan, remote.plan
    monkeypatch.setattr(decoding, "plan", lambda *a: asked.append(a) or real_decoding_plan(*a))
    monkeypatch.setattr(remote, "plan", lambda *a: planned_again.append(a) or real_plan(*a))
    server = serving_fake(tok, monkeypatch)
    fake = next(server)
    try:
        remote.server()  # the health check admission's plan reads (the app's first request makes it)
        with gr.Blocks() as demo:
            gr.api(served(decoding_handlers.decode_api, decoding_handlers._decode_api_plan, shell_slot=True),
                   api_name="decode",  # as the tab declares it
                   **{k: v for k, v in DECODE_LANE.items() if k in ("concurrency_limit", "concurrency_id", "queue")})
        guard(demo)
        demo.queue()
        admit_fairly(demo)
        demo.launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True)
        try:
            data = Client(demo.local_url, verbose=False).predict("The capital of France is", {"max_new_tokens": 8},
                                                                  api_name="/decode")
        finally:
            demo.close()
    finally:
        next(server, None)
    assert data["engine"] == {"kind": "vllm", "url": fake.url, "model": MODEL} and data["text"] == " Paris is lovely"
    assert len(asked) == 1 and planned_again == [], (asked, planned_again)


def test_a_planned_request_that_stays_here_neither_plans_again_nor_looks_the_server_up(monkeypatch):
    from backend.engines.server import generation as remote
    from backend.engines.generation.settings import DecodeSettings

    monkeypatch.setattr(remote, "plan", lambda *a: pytest.fail("planned again"))
    monkeypatch.setattr(remote, "server", lambda *a, **k: pytest.fail("the server was looked up"))
    said = Plan(long=True, note=remote.MODEL_BOX_NOTE)
    assert remote.route("decoder", DecodeSettings(), "my/model", said) == (None, remote.MODEL_BOX_NOTE)
    assert remote.route("text_generation", DecodeSettings(), None, Plan(long=True)) == (None, None)
