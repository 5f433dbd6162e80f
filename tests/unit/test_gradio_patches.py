"""Each patch of a Gradio internal (components/shell/gradio_patches.py), tested against the pinned
Gradio: if a release moves or reshapes the internal a patch relies on, the test for that patch
fails by name, instead of the app silently losing a guard."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from components.shell import gradio_patches as gp
from components.shell.guard import Selection

ROOT = Path(__file__).resolve().parents[2]


def test_gradio_is_the_version_the_patches_were_written_against():
    pinned = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("gradio==")]
    assert pinned == [f"gradio=={gp.GRADIO_VERSION}"] and gr.__version__ == gp.GRADIO_VERSION


# ------------------------------------------------------------------ the queue's door
def _queued_demo():
    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(lambda x: x, box, box, api_name="echo", concurrency_id="long")
    demo.queue()
    demo._queue.blocks = demo  # what launch() sets; push reads the blocks' fns from it
    return demo


def test_the_queue_has_the_internals_admission_reads():
    queue = _queued_demo()._queue
    assert inspect.iscoroutinefunction(queue.push)
    assert list(inspect.signature(queue.push).parameters)[:3] == ["body", "request", "username"]
    assert isinstance(queue.event_ids_to_events, dict) and isinstance(queue.active_jobs, list)
    assert isinstance(queue.event_queue_per_concurrency_id, dict)
    assert gp.queue_events(queue) == []


def test_a_refusal_answers_at_the_door_as_a_validation_error_and_an_admission_reaches_gradio():
    from backend.runtime.plan import Plan

    demo = _queued_demo()
    queue = demo._queue
    pushed, refused, seen = [], [], []
    event, plan = SimpleNamespace(_id="event-1"), Plan(long=True)

    async def original(body, request, username):  # as Gradio's push: an Event under body.event_id
        pushed.append(body)
        body.event_id = "event-1"
        queue.event_ids_to_events["event-1"] = event
        return True, "event-1"

    queue.push = original

    def refusal(events, session_hash, fn, data):
        seen.append((events, session_hash, getattr(fn, "api_name", None), data))
        return ("no", None) if data == ["refuse me"] else (None, plan)

    gp.FINISHING_POLLS, polls = 1, gp.FINISHING_POLLS
    try:
        gp.admit_at_queue_door(demo, refusal, refused.append)
        body = SimpleNamespace(session_hash="s1", data=["refuse me"], fn_index=0, trigger_id=None)
        ok, answer, kind = asyncio.run(queue.push(body, None, None))
        assert ok is False and kind == "validator_error" and answer[0]["message"] == "no"
        assert answer[0]["__type__"] == "validate" and refused == ["no"] and pushed == []
        body = SimpleNamespace(session_hash="s1", data=["fine"], fn_index=0, trigger_id=None)
        assert asyncio.run(queue.push(body, None, None)) == (True, "event-1") and pushed == [body]
        assert event.tlab_plan is plan  # the admitted request keeps its plan, for its handler
        assert gp.queue_events(queue) == []  # neither waiting nor running: not counted
    finally:
        gp.FINISHING_POLLS = polls
    assert seen[0][1] == "s1" and seen[0][2] == "echo"


def test_a_contract_refusal_is_answered_as_a_failed_event_at_once_without_reaching_the_lanes():
    demo = _queued_demo()
    queue = demo._queue
    pushed, sent, remembered, admitted = [], [], [], []

    async def original(body, request, username):
        pushed.append(body)
        return True, "never"

    queue.push = original
    queue.send_message = lambda event, message: sent.append((event, message))
    gp.remember_refusals(lambda session, why, handler: remembered.append((session, why, handler)))
    try:
        gp.admit_at_queue_door(demo, lambda *a, **k: admitted.append(a) or (None, None),
                               check=lambda fn, data, request: ("too long for the door", None))
        body = SimpleNamespace(session_hash="s2", data=["x" * 10], fn_index=0, trigger_id=None, event_id=None)
        ok, event_id, kind = asyncio.run(queue.push(body, None, None))
    finally:
        gp.remember_refusals(None)
    assert (ok, kind) == (True, "success") and pushed == [] and admitted == []  # no lane looked at it
    assert body.event_id == event_id and event_id in queue.pending_event_ids_session["s2"]
    assert "s2" in queue.pending_messages_per_session  # where the page's stream reads its answer
    (event, message), = sent
    assert event._id == event_id and message.success is False and message.title == gp.DOOR_TITLE
    assert message.output["error"] == "too long for the door"
    assert remembered == [("s2", "too long for the door", "<lambda>")]


# ------------------------------------------------------------------ the running event
def test_outside_a_queued_event_there_is_no_event_and_no_session():
    assert gp.current_event() is None and gp.current_session_hash() is None


def test_the_local_context_still_carries_blocks_event_and_request():
    from gradio.context import LocalContext

    for name in ("blocks", "event_id", "request"):
        assert hasattr(getattr(LocalContext, name), "get"), name


def test_the_page_url_is_the_address_the_request_reached_a_proxys_first():
    import gradio as gr
    from gradio.context import LocalContext
    from starlette.requests import Request

    def url_for(headers: list[tuple[bytes, bytes]]) -> str | None:
        scope = {"type": "http", "method": "POST", "path": "/gradio_api/queue/join", "headers": headers,
                 "scheme": "http", "server": ("10.0.0.5", 7860), "query_string": b""}
        token = LocalContext.request.set(gr.Request(request=Request(scope)))
        try:
            return gp.current_page_url()
        finally:
            LocalContext.request.reset(token)

    assert gp.current_page_url() is None  # outside a request
    assert url_for([(b"host", b"127.0.0.1:7993")]) == "http://127.0.0.1:7993/"
    assert url_for([(b"host", b"10.0.0.5:7860"), (b"x-forwarded-host", b"lab.example.org"),
                    (b"x-forwarded-proto", b"https")]) == "https://lab.example.org/"


def test_an_event_is_gone_when_gradio_forgets_it_or_its_session_closes():
    event = SimpleNamespace(alive=True)
    queue = SimpleNamespace(event_ids_to_events={"e": event})
    assert not gp.event_gone(queue, "e", event)
    event.alive = False
    assert gp.event_gone(queue, "e", event)
    assert gp.event_gone(SimpleNamespace(event_ids_to_events={}), "e", SimpleNamespace(alive=True))


def test_the_queue_event_still_has_alive_and_its_ids():
    from gradio.queueing import Event

    params = inspect.signature(Event.__init__).parameters
    assert {"session_hash", "fn"} <= set(params)
    assert "alive" in inspect.getsource(Event.__init__) and "_id" in inspect.getsource(Event.__init__)


# ------------------------------------------------------------------ Gradio's own input errors
def test_the_blocks_hooks_for_input_errors_exist_with_the_signatures_we_replace_them_with():
    demo = gr.Blocks()
    fmt = inspect.signature(demo._format_processing_error).parameters
    assert list(fmt) == ["block_fn", "index", "block", "value", "is_input", "original_error"]
    assert list(inspect.signature(demo.validate_inputs).parameters) == ["block_fn", "inputs"]
    assert inspect.iscoroutinefunction(demo.preprocess_data)


def test_word_input_errors_replaces_the_three_hooks_once():
    demo = gr.Blocks()
    wraps = []

    def wrap(f):
        wraps.append(f)

        async def wrapped(*a, **k):
            return await f(*a, **k)

        wrapped._tlab_guarded = True
        return wrapped

    fmt, few = (lambda *a: "said"), (lambda *a: None)
    gp.word_input_errors(demo, fmt, few, wrap)
    gp.word_input_errors(demo, fmt, few, wrap)
    assert demo._format_processing_error is fmt and demo.validate_inputs is few and len(wraps) == 1


# ------------------------------------------------------------------ per-session memory
def test_session_state_keeps_no_value_copies_after_the_patch():
    from gradio.state_holder import SessionState

    assert {"__init__", "_update_value_in_config", "__setitem__"} <= set(vars(SessionState))
    gp.no_session_value_copies()
    gp.no_session_value_copies()  # idempotent
    with gr.Blocks() as demo:
        box = gr.Textbox("x")
    state = SessionState(demo)
    state[box._id] = gr.Textbox("y")
    assert state.config_values == {}
    state._update_config(box._id)
    state._update_value_in_config(box._id, "z")
    assert state.config_values == {}


def test_a_new_session_has_every_attribute_gradios_own_init_sets():
    """The patch replaces SessionState.__init__ (Gradio's builds a config copy of every block, ~0.15 s
    a session on this page): anything else a Gradio release adds to __init__ must be added here too."""
    from gradio.state_holder import SessionState

    gp.no_session_value_copies()
    with gr.Blocks() as demo:
        gr.Textbox("x")
        gr.State(3)
    ours = SessionState(demo)
    gradios = SessionState.__new__(SessionState)
    SessionState._tlab_original_init(gradios, demo)
    assert set(vars(ours)) == set(vars(gradios))
    assert gradios.config_values and ours.config_values == {}
    for name in set(vars(gradios)) - {"config_values", "blocks_config"}:
        assert getattr(ours, name) == getattr(gradios, name), name
    assert ours.blocks_config.blocks == gradios.blocks_config.blocks


def test_setting_an_item_does_what_gradios_own_does_without_building_a_config(monkeypatch):
    from gradio.blocks import BlocksConfig
    from gradio.state_holder import SessionState

    gp.no_session_value_copies()
    with gr.Blocks() as demo:
        box = gr.Textbox("x")
        held = gr.State(3)
    gradios = SessionState(demo)
    SessionState._tlab_original_setitem(gradios, box._id, gr.Textbox("y"))
    SessionState._tlab_original_setitem(gradios, held._id, 4)
    monkeypatch.setattr(BlocksConfig, "config_for_block", lambda *a, **k: pytest.fail("a config was built"))
    ours = SessionState(demo)
    ours[box._id] = gr.Textbox("y")
    ours[held._id] = 4
    assert ours.blocks_config.blocks[box._id].value == gradios.blocks_config.blocks[box._id].value == "y"
    assert ours[held._id] == gradios[held._id] == 4
    assert set(ours._state_ttl) == set(gradios._state_ttl) == {held._id}
    assert ours.config_values == {}


def test_the_upload_parser_is_capped_at_our_file_count():
    from gradio.route_utils import GradioMultiPartParser

    assert "max_files" in inspect.signature(GradioMultiPartParser.__init__).parameters
    gp.limit_upload_files(3)
    gp.limit_upload_files(3)
    parser = GradioMultiPartParser(headers={"content-type": "multipart/form-data; boundary=x"}, stream=None,
                                   max_files=1000, max_fields=1000, upload_id=None, upload_progress=None,
                                   max_file_size=1)
    assert parser.max_files == 3
    from components.shell.session_memory import UPLOAD_MAX_FILES

    gp.limit_upload_files(UPLOAD_MAX_FILES)  # leave the process as app.py sets it


@pytest.mark.parametrize("name", ["admit_at_queue_door", "current_event", "current_session_hash", "current_page_url",
                                  "word_input_errors", "no_session_value_copies", "limit_upload_files",
                                  "special_arguments", "order_lane", "wrap_handlers", "parameter_names",
                                  "lane_of", "readable_file_model",
                                  "page_being_built", "enclosing_block", "event_output_ids", "event_components",
                                  "fn_inputs",
                                  "patient_startup_check"])
def test_each_patch_is_listed_in_the_module_table(name):
    assert f"`{name}`" in gp.__doc__


def test_a_selection_handler_called_without_event_data_gets_an_empty_selection():
    """Gradio builds a handler's SelectData from the request's event data before the handler runs;
    a stranger's fn_index call sends none, and gr.SelectData itself read None["index"]."""
    from gradio.helpers import special_args

    def handler(evt: Selection):
        return evt.row_value, evt.index

    with pytest.raises(TypeError):
        gr.SelectData(None, None)
    for sent in (None, {"a": [1]}, 12345):
        inputs, *_ = special_args(handler, [], None, gr.EventData(None, sent))
        assert isinstance(inputs[0], Selection) and handler(*inputs) == (None, None)
    inputs, *_ = special_args(handler, [], None, gr.EventData(None, {"index": [2, 1], "value": "x",
                                                                        "row_value": [1, "a text"]}))
    assert handler(*inputs) == ([1, "a text"], [2, 1])


# ------------------------------------------------------------------ the queue's per-event summary
def test_the_apps_setting_stops_the_queue_summarising_its_events_after_each_one(monkeypatch):
    """app.py sets GRADIO_ANALYTICS_CACHE_FREQUENCY: Gradio's queue otherwise rebuilds a pandas
    summary of up to 10,000 past events after every event (for the monitoring page, off here)."""
    import app

    record = [{"function": "f", "status": "success", "process_time": 1.0}]
    monkeypatch.setenv("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1")  # Gradio's default
    with gr.Blocks() as plain:
        gr.Textbox()
    queue = plain.queue()._queue
    queue.events_recorded = 1
    assert "f" in queue.compute_analytics_summary(record)["functions"]  # the internal is still there
    monkeypatch.setenv("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(app.QUEUE_SUMMARY_EVERY))
    with gr.Blocks() as ours:
        gr.Textbox()
    queue = ours.queue()._queue
    queue.events_recorded = 10_000
    assert queue.compute_analytics_summary(record * 10_000) == {"functions": {}}


# ------------------------------------------------------------------ a handler's special arguments
def test_special_arguments_puts_the_request_where_gradio_does_and_finds_progress():
    request = object()

    def job(a, request: gr.Request, b):
        return a, b

    def optional(a, request: gr.Request | None = None):
        return a

    def slow(a, progress=gr.Progress()):
        return a

    assert gp.special_arguments(job, [1, 2], request) == ([1, request, 2], None)
    assert gp.special_arguments(optional, [1], request) == ([1, request], None)
    assert gp.special_arguments(slow)[1] == 1
    assert gp.special_arguments(job)[1] is None


# ------------------------------------------------------------------ the queue's order
def _lane_events(demo, limit=2):
    from gradio.queueing import EventQueue

    queue = demo._queue
    queue.event_queue_per_concurrency_id["long"] = lane = EventQueue("long", limit)
    queue.active_jobs = [None] * 4
    fn = SimpleNamespace(batch=False)
    make = lambda s: SimpleNamespace(session_hash=s, concurrency_id="long", fn=fn, _id=s)  # noqa: E731
    return queue, lane, make


def test_order_lane_starts_the_event_pick_names_and_keeps_the_rest_in_order():
    demo = _queued_demo()
    queue, lane, make = _lane_events(demo)
    running = make("a1")
    queue.active_jobs[0] = [running]
    lane.current_concurrency = 1
    lane.queue = [make("a2"), make("a3"), make("b1")]
    seen = []

    def pick(waiting, run):
        seen.append(([s for s, _ in waiting], [s for s, _ in run]))
        return 2

    gp.order_lane(demo, "long", pick)
    events, batch, cid = queue.get_events()
    assert [e.session_hash for e in events] == ["b1"] and cid == "long" and not batch
    assert [e.session_hash for e in lane.queue] == ["a2", "a3"]
    assert seen == [(["a2", "a3", "b1"], ["a1"])]


def test_order_lane_holds_the_lane_when_pick_names_none():
    demo = _queued_demo()
    queue, lane, make = _lane_events(demo)
    lane.queue = [make("a2")]
    gp.order_lane(demo, "long", lambda waiting, running: None)
    assert queue.get_events() is None and [e.session_hash for e in lane.queue] == ["a2"]


# ------------------------------------------------------------------ the page's event functions
def test_wrap_handlers_wraps_each_handler_once():
    demo = _queued_demo()

    def wrap(fn):
        def wrapped(*a):
            return fn(*a)
        wrapped.done = True
        return wrapped

    gp.wrap_handlers(demo, wrap, "done")
    first = [f.fn for f in demo.fns.values()]
    gp.wrap_handlers(demo, wrap, "done")
    assert [f.fn for f in demo.fns.values()] == first and all(getattr(f, "done", False) for f in first)


def test_parameter_names_are_the_apis_else_the_handlers():
    def handler(text, top_k=5):
        return text

    with gr.Blocks() as demo:
        a, b = gr.Textbox(), gr.Number()
        a.submit(handler, [a, b], a, api_name="named")
    block_fn = next(iter(demo.fns.values()))
    assert gp.parameter_names(block_fn) == ["text", "top_k"]


def test_lane_of():
    with gr.Blocks() as demo:
        box = gr.Textbox(elem_id="the-box")
        box.submit(lambda x: x, box, box, concurrency_id="long")
    assert gp.lane_of(next(iter(demo.fns.values()))) == "long"


def test_the_page_being_built_and_what_an_event_writes():
    assert gp.page_being_built() is None and gp.enclosing_block() is None
    with gr.Blocks() as demo:
        with gr.Tab("t") as tab:
            assert gp.page_being_built() is demo and gp.enclosing_block() is tab
            a, b, c = gr.Textbox(), gr.Textbox(), gr.Markdown()
            ev = a.submit(lambda x: (x, x), a, [b, c], show_progress_on=[c])
            assert gp.event_components(ev) == [b, c]
    assert gp.event_output_ids(ev) == [gp.component_id(b), gp.component_id(c)]
    assert gp.event_output_ids(ev, progress=True) == [gp.component_id(c)]
    assert gp.event_output_ids("not an event") == []
    assert gp.fn_inputs(next(iter(demo.fns.values()))) == [a]


def test_readable_file_model_refuses_a_non_upload_in_words():
    f = gr.File()
    gp.readable_file_model(f, lambda: ValueError("file must be an uploaded file"))
    assert f.data_model.model_config["title"] == "FileData"
    with pytest.raises(ValueError, match="file must be an uploaded file"):
        f.data_model.model_validate({"nothing": "here"})
    assert f.data_model.model_validate({"path": "/tmp/x.txt", "meta": {"_type": "gradio.FileData"}}).path == "/tmp/x.txt"


# ------------------------------------------------------------------ the start-up self-check
def test_launch_looks_at_its_own_page_through_networking_url_ok():
    src = inspect.getsource(gr.Blocks.launch)
    assert "networking.url_ok(self.local_url)" in src


def test_the_start_up_check_asks_again_until_the_page_answers(monkeypatch):
    from gradio import networking

    answers = iter([False, False, True])
    monkeypatch.setattr(networking, "url_ok", lambda url: next(answers))
    monkeypatch.setattr("time.sleep", lambda s: None)
    gp.patient_startup_check(total_s=60)
    assert networking.url_ok("http://127.0.0.1:1/") is True
    gp.patient_startup_check(total_s=60)  # idempotent: not wrapped twice
    assert getattr(networking.url_ok, "_tlab_patient", False)


def test_the_start_up_check_gives_up_after_its_time(monkeypatch):
    from gradio import networking

    monkeypatch.setattr(networking, "url_ok", lambda url: False)
    monkeypatch.setattr("time.sleep", lambda s: None)
    gp.patient_startup_check(total_s=0)
    assert networking.url_ok("http://127.0.0.1:1/") is False
