"""With a generation server, Summarize, Translate, Pipelines Generate and the corpus reader's Ask join
the decode lane (the server batches a class's requests), and what runs here is still long work:
admission asks the backend whether the server will do it, and the handler takes the long slot when
it will not. Without a server they stay in the long lane, as before."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from backend import pipelines as pipelines_backend
from backend import search as search_backend
from backend.engines.server import generation as remote
from backend.runtime.plan import Plan
from components.shell import lanes as common
from components.pipelines import handlers as tab
from components.search import ui as search_tab
from components.shell.endpoint import served
from components.shell.guard import _guarded
from tests.helpers.fake_server import FakeServer, script_for


def _event(handler, args):
    """`handler` as the page serves it (`served(fn, planner)`, as the tab declares it), guard included."""
    fn = SimpleNamespace(concurrency_id="decode", fn=_guarded(handler))
    return common._event_is_long(fn, list(args))


SUMMARY = ("Some text.", 60, 10, 0, "", "")
TRANSLATION = ("Some text.", "en", "de", 120, 0, "", "")
GENERATION = ("Once", "greedy", 48, 0.7, 50, 0.9, 4, 0, "")


@pytest.mark.parametrize("server_up", [True, False])
def test_admission_asks_where_each_task_runs(monkeypatch, server_up):
    asked = []

    def plan(task, override=None, settings=None):
        asked.append((task, override, settings))
        if task == "generate_text":
            on = server_up and not override and settings["strategy"] != "beam"
        else:
            on = server_up and not override and not (settings or {}).get("num_beams")
        return Plan(on_server=on, long=not on)

    monkeypatch.setattr(pipelines_backend, "plan", plan)
    monkeypatch.setattr(search_backend, "reader_plan", lambda: Plan(on_server=server_up, long=not server_up))
    summarize = served(tab.run_summarize, tab._summary_plan)
    translate = served(tab.run_translate, tab._translation_plan)
    assert _event(summarize, SUMMARY) is (not server_up)
    assert _event(summarize, SUMMARY[:3] + (4,) + SUMMARY[4:])  # beams: here, long
    assert _event(translate, TRANSLATION[:-1] + ("some/model",))  # a model-box model: here, long
    assert _event(served(tab.stream_generate, tab._generation_plan), GENERATION) is (not server_up)
    assert _event(served(tab.run_generate, tab._generation_plan), GENERATION) is (not server_up)
    assert _event(served(search_tab.ask, search_tab._reader_plan), ("What is a token?", 5)) is (not server_up)
    assert asked[0] == ("summarize", "", {"num_beams": 0}) and asked[2][1] == "some/model"
    assert asked[3][2]["strategy"] == "greedy" and asked[3][2]["max_new_tokens"] == 48


def test_junk_beams_are_left_to_the_handler():
    assert tab._beams("many") == 0 and tab._beams("3") == 3 and tab._beams(None) == 0
    assert tab._beams(float("inf")) == 0 and tab._beams("-inf") == 0 and tab._beams(float("nan")) == 0


def test_the_handlers_take_the_long_slot_only_in_the_decode_lane_and_only_for_work_here(monkeypatch):
    slot = threading.BoundedSemaphore(1)
    monkeypatch.setattr(common, "LONG_SLOT", slot)
    monkeypatch.setattr(common, "_SERVER_LANE", True)
    with common.server_or_long_slot(False, "summary"):
        assert not slot.acquire(blocking=False)  # work here, in the decode lane: the long slot is held
    with common.server_or_long_slot(True, "summary"):
        assert slot.acquire(blocking=False)  # the server's work: no slot
        slot.release()
    monkeypatch.setattr(common, "_SERVER_LANE", False)  # the long lane holds the slot for its handler already
    with common.server_or_long_slot(False, "summary"):
        assert slot.acquire(blocking=False)
        slot.release()


def test_the_lane_is_chosen_when_the_page_is_built(monkeypatch):
    monkeypatch.delenv("TLAB_GENERATION_URL", raising=False)
    assert common.server_lane() is common.LONG_LANE and not common._SERVER_LANE
    monkeypatch.setenv("TLAB_GENERATION_URL", "http://127.0.0.1:9")
    assert common.server_lane() is common.DECODE_LANE and common._SERVER_LANE
    monkeypatch.setattr(common, "_SERVER_LANE", False)


def test_runs_on_server_knows_the_server_only_from_its_last_health_check(monkeypatch):
    from tests.helpers.tiny_models import smollm2_tokenizer

    fake = FakeServer(smollm2_tokenizer())
    fake.script = script_for(fake.tokenizer, " ok")
    try:
        monkeypatch.setenv("TLAB_PROFILE", "local")
        monkeypatch.delenv("TLAB_MODEL_SUMMARIZATION", raising=False)
        monkeypatch.setenv("TLAB_GENERATION_URL", fake.url)
        remote.forget()
        assert not pipelines_backend.runs_on_server("summarize")  # not checked yet: no network here
        assert fake.health_calls == 0
        remote.server()
        assert pipelines_backend.runs_on_server("summarize") and pipelines_backend.runs_on_server("translate")
        assert search_backend.reader_on_server()
        assert not pipelines_backend.runs_on_server("summarize", None, {"num_beams": 2})
        assert not pipelines_backend.runs_on_server("summarize", "some/model")
        assert pipelines_backend.runs_on_server("generate_text", None, {"strategy": "sample", "max_new_tokens": 8})
        assert not pipelines_backend.runs_on_server("generate_text", None, {"strategy": "beam", "max_new_tokens": 8})
        assert not pipelines_backend.runs_on_server("generate_text", None, {"strategy": "nonsense"})
    finally:
        fake.close()
        remote.forget()
