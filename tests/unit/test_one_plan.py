"""One plan per request: with a generation engine configured, a /summarize request asks the engine
gate (`hub.engine_models.gate`) once, when it joins the queue; the handler and the backend use that
plan. A real Gradio queue in this process (the shell's admission patch on it), the real Pipelines
handler, the fake OpenAI-compatible engine; no weights are loaded (the engine writes the summary)."""

from __future__ import annotations

import socket

import gradio as gr
import pytest

from backend.hub import engine_models
from backend.runtime.plan import Plan
from components.pipelines import handlers
from components.shell import admit_fairly, engine_lane
from components.shell import plans
from components.shell.guard import guard
from tests.unit.test_remote_chat import TEXT, _no_weights_here
from tests.unit.test_remote_generation import serving_fake


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


def test_a_summarize_request_asks_the_engine_gate_once(fake, monkeypatch):
    from gradio_client import Client

    _no_weights_here(monkeypatch)
    gates, real_gate = [], engine_models.gate

    def counted(*args, **kwargs):
        gates.append(args)
        return real_gate(*args, **kwargs)

    monkeypatch.setattr(engine_models, "gate", counted)
    with gr.Blocks() as demo:
        inputs = [gr.Textbox(), gr.Number(), gr.Number(), gr.Number(), gr.Textbox(), gr.Textbox()]
        out = [gr.Markdown(), gr.Textbox(), gr.HTML(), gr.Textbox(), gr.Textbox(), gr.Plot(), gr.Markdown(),
               gr.JSON()]  # as the Pipelines tab wires them
        gr.Button().click(handlers.run_summarize, inputs, out, api_name="summarize", **engine_lane())
    guard(demo)
    demo.queue()
    admit_fairly(demo)
    demo.launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True)
    try:
        result = Client(demo.local_url, verbose=False).predict(TEXT, 16, 2, 0, "", "", api_name="/summarize")
    finally:
        demo.close()
    r = result[-1]
    assert r["summary"] == "Paris is lovely" and r["engine"]["kind"] != "in-process"  # the engine wrote it
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
