"""Every place the app touches a private Gradio internal, in one module (Gradio pinned: 6.31.0).

Each patch names the Gradio behaviour it changes and has its own test
(tests/unit/components/shell/test_gradio_patches.py) that fails loudly if the internal it relies on changes shape.
No other module reads `_queue`, `event_ids_to_events`, `active_jobs`, `SessionState`,
`GradioMultiPartParser` or `LocalContext`; they ask here.

| patch | internal | why |
|---|---|---|
| `admit_at_queue_door` | `Blocks._queue.push`, `event_ids_to_events`, `active_jobs`, `event_queue_per_concurrency_id`, the queue `Event` | refuse a request as it joins the queue (Gradio 6 has no admission hook); keep its plan on its event |
| `failed_at_once` (with `admit_at_queue_door`'s `check`) | `_queue.pending_messages_per_session`, `pending_event_ids_session`, `pending_message_lock`, `send_message`, `gradio.queueing.Event`, `ProcessCompletedMessage` | a request its contract refuses is answered as a failed event at once (the page's failure listeners then run), not as a validation error beside an input (checked end to end: tests/browser/test_anatomy_tab.py, tests/fuzz/test_endpoint_extremes.py) |
| `current_event` | `gradio.context.LocalContext`, `_queue.event_ids_to_events` | a sync handler's thread is not told of a cancel: the watcher polls the event |
| `current_session_hash` | `LocalContext.request` | the failed handler's message reaches the `.failure` listener |
| `current_page_url` | `LocalContext.request` (a `gr.Request`'s headers) | "The same in Python" names the address the visitor reached, not a default |
| `word_input_errors` | `Blocks._format_processing_error`, `validate_inputs`, `preprocess_data` | Gradio's own input errors named its internals |
| `no_session_value_copies` | `SessionState.__init__`, `_update_value_in_config`, `_update_config`, `__setitem__` | per-session copies of every value, only for deep links (11 MB a /tokenize) |
| `special_arguments` | `gradio.helpers.special_args` | a folded life-cycle job gets its gr.Request where Gradio would put it |
| `order_lane` | `_queue.get_events`, `event_queue_per_concurrency_id`, `active_jobs`, `Event.concurrency_id` | the long lane starts an address's job before a second job of an address that already runs one |
| `wrap_handlers`, `parameter_names` | `Blocks.fns`, `BlockFunction.fn`, `input_parameter_names`, `gradio.utils.get_function_params` | the guard around every handler, and the argument a refusal names |
| `page_being_built`, `enclosing_block`, `event_output_ids`, `event_components`, `fn_inputs` | `gradio.context.Context.root_block` / `.block`, an event's dependency dict (`outputs`, `show_progress_on`), `Blocks.blocks`, `BlockFunction.inputs` | the shell wires a page's life cycle, runs and links while the page is built, and the guard names an event's inputs; Gradio 6 has no public way to ask which page or tab is being built or what an event writes |
| `lane_of` | `BlockFunction.concurrency_id` / `Event.concurrency_id` | admission reads a request's lane |
| `readable_file_model` | `Component.data_model`, `gradio.data_classes.FileData` | a file argument that is not an upload is refused in words, not a pydantic dump |
| `patient_startup_check` | `gradio.networking.url_ok` | launch's one 3-second look at its own page killed the app on a loaded box |
| `limit_upload_files` | `route_utils.GradioMultiPartParser.max_files` | Gradio 6 takes 1,000 files per upload request and has no setting |
"""

from __future__ import annotations

import asyncio
import functools

GRADIO_VERSION = "6.31.0"  # the version every patch below was written against (requirements.txt pins it)


# ------------------------------------------------------------------ the queue's door
FINISHING_POLLS, FINISHING_POLL_S = 20, 0.05  # up to 1 s for a finished job to leave the queue's books


def _waiting_ids(queue) -> set[str]:
    return {e._id for q in list(queue.event_queue_per_concurrency_id.values()) for e in list(q.queue)}


def queue_events(queue) -> list[tuple]:
    """(session, fn, data, running, plan) of the events waiting in a lane or running now, `plan` the
    one admission kept with the event (None: none). Gradio keeps a finished event in
    `event_ids_to_events` until after its answer is sent (it closes it out after): such an event is
    neither waiting nor in `active_jobs`, and does not count."""
    waiting = _waiting_ids(queue)
    active = {e._id for job in list(queue.active_jobs) if job for e in job}
    return [(e.session_hash, e.fn, getattr(e.data, "data", None), e._id not in waiting, getattr(e, "tlab_plan", None))
            for e in list(queue.event_ids_to_events.values()) if e._id in waiting or e._id in active]


def admit_at_queue_door(demo, admit, on_refused=None, with_request: bool = False, check=None) -> None:
    """Patch `demo._queue.push` so `admit(events, session_hash, fn, data)` -> (why refused or None,
    the request's plan or None) is asked as each request joins the queue (`with_request`: the HTTP
    request, whose address names the client, is passed too, last). A refusal answers as
    Gradio's own validation error does (the page shows it; gradio_client raises it); an admitted
    request keeps its plan on its queue Event (`tlab_plan`), where its handler finds it
    (`current_event`). `check(fn, data, request)` -> (why refused or None, the request's plan) is asked once before, off the
    event loop (it may tokenize a long text); `admit` then gets that plan (`plan=`) instead of making another: a request out of its endpoint's contract is refused without a lane's look.
    Gradio 6 has no supported admission hook."""
    from gradio import route_utils

    queue = demo._queue
    push = queue.push

    async def fair_push(body, request, username):
        try:
            fn = route_utils.get_fn(queue.blocks, None, body)
        except Exception:  # an unknown fn_index: Gradio's own push answers it
            return await push(body, request, username)
        extra = (request,) if with_request else ()
        why, planned = (None, None) if check is None else await asyncio.to_thread(check, fn, body.data, request)
        if why is not None:  # logged by `remember_refusals`' callback, as the handler's own refusal would be
            return await failed_at_once(queue, body, request, username, fn, why)
        kept = {} if check is None else {"plan": planned}  # the plan `check` made: admission keeps it
        why, plan = admit(queue_events(queue), body.session_hash, fn, body.data, *extra, **kept)
        for _ in range(FINISHING_POLLS):  # a job whose answer the client already has may still be closing
            if why is None:
                break
            await asyncio.sleep(FINISHING_POLL_S)
            why, plan = admit(queue_events(queue), body.session_hash, fn, body.data, *extra, **kept)
        if why is None:
            answer = await push(body, request, username)
            # No await between push's return and this line: the handler, which runs after the queue's
            # loop next gets control, finds the plan (an event already started computes its own).
            event = queue.event_ids_to_events.get(getattr(body, "event_id", None) or "")
            if plan is not None and event is not None:
                event.tlab_plan = plan
            return answer
        if on_refused is not None:
            on_refused(why)
        return False, [{"__type__": "validate", "is_valid": False, "message": why,
                        "parameter_name": "lane"}], "validator_error"

    queue.push = fair_push


DOOR_TITLE = "Refused at the door"  # the title of a refusal that never waited in a lane


async def failed_at_once(queue, body, request, username, fn, why: str):
    """Answer a request refused at the door as a failed event, at once, without a place in any lane: the page's
    life cycle then runs its failure part as after any handler's error (the outputs blanked, the message in the
    tab's error box: `remember_error` keeps it for that), a gradio_client call raises it as it raises a handler's
    error, and the REST route's stream ends with it. Gradio 6 answers a refusal at its door only as a validation
    error, which the page shows beside an input and leaves the old result standing."""
    from gradio.queueing import Event
    from gradio.server_messages import ProcessCompletedMessage

    event = Event(body.session_hash, fn, request, username)
    event.data = body
    if body.session_hash is None:
        body.session_hash = event.session_hash
    async with queue.pending_message_lock:
        if body.session_hash not in queue.pending_messages_per_session:
            queue.pending_messages_per_session[body.session_hash] = asyncio.Queue()  # as Gradio's push makes it
        queue.pending_event_ids_session.setdefault(body.session_hash, set()).add(event._id)
    body.event_id = event._id
    if _REMEMBER[0] is not None:
        _REMEMBER[0](body.session_hash, why, getattr(getattr(fn, "fn", None), "__name__", "?"))
    queue.send_message(event, ProcessCompletedMessage(
        output={"error": why, "title": DOOR_TITLE, "duration": 5, "visible": True}, title=DOOR_TITLE, success=False))
    return True, event._id, "success"


_REMEMBER: list = [None]  # (session, message) -> None: where the page's failure listener finds the message


def remember_refusals(remember) -> None:
    """`remember(session, message, handler name)`: called with each door refusal before it is answered (errors.py keeps it
    for the tab's failure listener, as it keeps a handler's message)."""
    _REMEMBER[0] = remember


# ------------------------------------------------------------------ the queue's order
def order_lane(demo, concurrency_id: str, pick) -> None:
    """Patch `demo._queue.get_events` so that, in lane `concurrency_id`, the event that starts next is
    `pick(waiting, running)` -> the index of a waiting event, or None (nothing of this lane starts now:
    its free slot waits for an eligible event). `waiting` and `running` are the lane's events as
    (session_hash, Event), in queue order. Gradio starts a lane's events first come, first served and
    has no hook for another order."""
    queue = demo._queue
    get_events = queue.get_events

    def ordered_get_events():
        lane = queue.event_queue_per_concurrency_id.get(concurrency_id)
        if lane is None or not lane.queue:
            return get_events()
        running = [(e.session_hash, e) for job in list(queue.active_jobs) if job for e in job
                   if e.concurrency_id == concurrency_id]
        chosen = pick([(e.session_hash, e) for e in lane.queue], running)
        if chosen is None:  # hide the lane from this round (sync code under the queue's delete_lock)
            held, lane.queue = lane.queue, []
            try:
                return get_events()
            finally:
                lane.queue = held + lane.queue
        if chosen:
            lane.queue.insert(0, lane.queue.pop(chosen))
        return get_events()

    queue.get_events = ordered_get_events


# ------------------------------------------------------------------ the page's event functions
def wrap_handlers(demo, wrap, done_mark: str) -> None:
    """Replace each event handler `fn` of `demo` (a `BlockFunction.fn`) by `wrap(fn)`, once: a handler
    carrying the attribute `done_mark` is left as it is. Gradio 6 has no hook around every handler."""
    for block_fn in demo.fns.values():
        fn = block_fn.fn
        if fn is not None and not getattr(fn, done_mark, False):
            block_fn.fn = wrap(fn)


def parameter_names(block_fn) -> list[str]:
    """An event's argument names as /gradio_api/info gives them (`input_parameter_names`, else the
    handler's own parameters, as `gradio.utils.get_function_params` reads them)."""
    names = [str(n) for n in (getattr(block_fn, "input_parameter_names", None) or [])]
    if names:
        return names
    from gradio.utils import get_function_params

    try:
        return [p[0] for p in get_function_params(block_fn.fn)]
    except Exception:  # noqa: BLE001  a handler whose signature cannot be read
        return []


def lane_of(fn_or_event) -> str | None:
    """The concurrency group (lane) of a BlockFunction or a queued Event."""
    return getattr(fn_or_event, "concurrency_id", None)


def readable_file_model(component, refuse) -> None:
    """Make `component` (a gr.File) call `refuse()` -> an exception to raise when its API value is
    not an uploaded file, instead of pydantic's validation dump (its `data_model`, a `FileData`
    subclass; the API schema keeps Gradio's title)."""
    from gradio.data_classes import FileData

    if component.data_model is not FileData:
        return

    class UploadedFile(FileData):
        model_config = {**FileData.model_config, "title": "FileData"}

        @classmethod
        def model_validate(cls, obj, *args, **kwargs):
            try:
                return FileData.model_validate(obj, *args, **kwargs)
            except ValueError:  # pydantic's ValidationError is a ValueError
                raise refuse() from None

    component.data_model = UploadedFile


# ------------------------------------------------------------------ the start-up self-check
STARTUP_CHECK_S = 120.0  # how long launch may wait for its own page to answer


def patient_startup_check(total_s: float = STARTUP_CHECK_S) -> None:
    """Gradio's `launch` asks its own page once (`networking.url_ok`: a HEAD with a 3 s timeout) and,
    on a timeout, exits with "When localhost is not accessible, a shareable link must be created".
    On a loaded 2-core box the page (a megabyte of config) took longer than 3 s, and the app died at
    start (seen twice here while other jobs ran). Ask again until `total_s` has passed; a refused
    connection still fails at once, after the same wait. Idempotent."""
    import time

    from gradio import networking

    if getattr(networking.url_ok, "_tlab_patient", False):
        return
    original = networking.url_ok

    def url_ok(url: str) -> bool:
        deadline = time.monotonic() + total_s
        while not original(url):
            if time.monotonic() > deadline:
                return False
            time.sleep(1.0)
        return True

    url_ok._tlab_patient = True
    networking.url_ok = url_ok


# ------------------------------------------------------------------ the running event
def current_event():
    """(queue, event id, Event) of the event this thread runs, or None outside a queued event."""
    from gradio.context import LocalContext

    blocks = LocalContext.blocks.get(None)
    event_id = LocalContext.event_id.get(None)
    queue = getattr(blocks, "_queue", None)
    events = getattr(queue, "event_ids_to_events", None)
    if not event_id or events is None or event_id not in events:
        return None
    return queue, event_id, events[event_id]


def event_gone(queue, event_id: str, event) -> bool:
    """Has Gradio forgotten this event (cancelled) or its session closed (`Event.alive`)?"""
    return not getattr(event, "alive", True) or queue.event_ids_to_events.get(event_id) is not event


def current_session_hash() -> str | None:
    """The browser session of the request this thread serves (None outside one)."""
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)
    return getattr(request, "session_hash", None) or None


def current_page_url() -> str | None:
    """The address the visitor's page reached this server at ("http://host:port/"), from the request this
    thread serves (a proxy's X-Forwarded-* first); None outside a request."""
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)
    headers = getattr(request, "headers", None)
    if request is None or headers is None:
        return None
    host = headers.get("x-forwarded-host") or headers.get("host")
    if not host:
        return None
    scheme = headers.get("x-forwarded-proto") or getattr(getattr(getattr(request, "request", None), "url", None),
                                                         "scheme", None) or "http"
    return f"{scheme.split(',')[0].strip()}://{host.split(',')[0].strip()}/"


# ------------------------------------------------------------------ the page being built
def page_being_built():
    """The gr.Blocks whose `with` block is open in this thread (`Context.root_block`), or None."""
    import gradio as gr

    return gr.context.Context.root_block


def enclosing_block():
    """The block (a gr.Tab, a gr.Column...) whose `with` is innermost now (`Context.block`), or None."""
    import gradio as gr

    return gr.context.Context.block


def event_output_ids(event, progress: bool = False) -> list:
    """The component ids an event (a `.click(...)`'s return value, its dependency dict) writes; with
    `progress`, the ids its progress shows on (`show_progress_on`), else its outputs."""
    if not isinstance(event, dict):
        return []
    found = event.get("show_progress_on") if progress else None
    return list(found if found is not None else (event.get("outputs") or []))


def event_components(event) -> list:
    """The components an event writes, looked up in the page being built (`Blocks.blocks`)."""
    root = page_being_built()
    blocks = getattr(root, "blocks", {}) if root is not None else {}
    return [blocks.get(i) for i in event_output_ids(event) if isinstance(i, int)]


def component_id(component) -> int | None:
    """A component's id in its page (`Block._id`), what an event's dependency dict names it by."""
    return getattr(component, "_id", None)


def fn_inputs(block_fn) -> list:
    """An event function's input components (`BlockFunction.inputs`)."""
    return list(getattr(block_fn, "inputs", None) or [])


# ------------------------------------------------------------------ a handler's special arguments
def special_arguments(fn, values: list | None = None, request=None) -> tuple[list, int | None]:
    """(`values` with the gr.Request put where Gradio puts it for `fn`, the position of `fn`'s
    gr.Progress or None), by Gradio's own reading of `fn` (`gradio.helpers.special_args`). The
    life cycle calls several small jobs from one handler: each must get its arguments as it would
    as a handler of its own."""
    from gradio.helpers import special_args

    args, progress, _event_data, _props = special_args(fn, None if values is None else list(values), request)
    return args, progress


# ------------------------------------------------------------------ Gradio's own input errors
def word_input_errors(demo, processing_message, too_few, wrap_preprocess) -> None:
    """Replace the Blocks' private hooks that word a value a component cannot read
    (`_format_processing_error`), a short argument list (`validate_inputs`, which listed component
    reprs) and a server path given as a file (`preprocess_data` raising InvalidPathError)."""
    demo._format_processing_error = processing_message
    demo.validate_inputs = too_few
    if not getattr(demo.preprocess_data, "_tlab_guarded", False):
        demo.preprocess_data = wrap_preprocess(demo.preprocess_data)


# ------------------------------------------------------------------ per-session memory
def no_session_value_copies() -> None:
    """Keep no per-session copies of component values or configs for deep links (idempotent):
    Gradio copies every input and output value into `SessionState.config_values` only so that
    `gr.DeepLinkButton` (unused here) can rebuild the page. Gradio's `__init__` builds that copy
    for every block of the page (1,144 here): ~0.15 s of the server's CPU for each new session,
    every page load and every API call without a session, so `__init__` is replaced, not wrapped (and
    `__setitem__`, which built the updated block's config for every output an event updates)."""
    import datetime
    import os
    from copy import copy

    from gradio.state_holder import SessionState

    if getattr(SessionState, "_tlab_bounded", False):
        return

    def __init__(self, blocks) -> None:  # Gradio 6.31's SessionState.__init__ without config_values' copies
        self.blocks_config = copy(blocks.default_config)
        self.config_values = {}  # every block's config, per session: only deep links read it
        self.state_data = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600

    def _update_value_in_config(self, key: int, value) -> None:
        return None  # the input or output value, per session: only deep links read it

    def _update_config(self, key: int) -> None:
        return None  # the block's config, per session: only deep links read it

    def __setitem__(self, key: int, value) -> None:  # Gradio 6.31's, without the updated block's config copy
        from gradio.components import State

        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value

    SessionState._tlab_original_init = SessionState.__init__  # the unit test compares the two
    SessionState._tlab_original_setitem = SessionState.__setitem__
    SessionState.__init__ = __init__
    SessionState._update_value_in_config = _update_value_in_config
    SessionState._update_config = _update_config
    SessionState.__setitem__ = __setitem__
    SessionState._tlab_bounded = True


def limit_upload_files(max_files: int) -> None:
    """At most `max_files` files per upload request (Gradio's parser allows 1,000); more are refused
    with its own "Too many files" answer (HTTP 400) before anything is written. Idempotent."""
    from gradio.route_utils import GradioMultiPartParser

    if getattr(GradioMultiPartParser, "_tlab_max_files", None) == max_files:
        return
    original = getattr(GradioMultiPartParser, "_tlab_original_init", GradioMultiPartParser.__init__)

    @functools.wraps(original)
    def __init__(self, *args, max_files_: int = max_files, **kwargs) -> None:
        original(self, *args, **kwargs)
        self.max_files = min(self.max_files, max_files_)

    GradioMultiPartParser._tlab_original_init = original
    GradioMultiPartParser.__init__ = __init__
    GradioMultiPartParser._tlab_max_files = max_files
