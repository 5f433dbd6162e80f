"""What every tab shares: the model queue, readable errors, and the 'served by' badge."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import html
import inspect
import logging
import re
import sys
import threading

import gradio as gr

from backend.runtime import budget
from backend.runtime import config
from backend.runtime.config import get_settings
from backend.runtime.errors import InputError, LabError

# ---------------------------------------------------------------- lanes
# Two lanes, each a Gradio concurrency group with TLAB_MODEL_CONCURRENCY slots (1 by default):
# - SHORT_LANE, the short lane: answers in a second or two (classify, tokenize, attention, a
#   search, one decode of under 64 tokens), so it never waits behind a long job;
# - LONG_LANE: index builds, the index comparison, the retriever-reader, summaries,
#   translations, NER and QA by the instruct fallback, generation, the decoding comparison.
# Two jobs at once share the cores: backend.runtime.budget.fair_threads gives each its share of torch
# threads, and every job stops at its time budget (TLAB_TIME_BUDGET_S) or on a cancel.
# - DECODE_LANE (`/decode` only): a decode is short or long depending on its settings, which a
#   static group cannot know; it has 2 slots, and a long decode also takes the long lane's slot
#   (`LONG_SLOT`, below) before it runs, so it queues behind long work, never in front of short work.
# The short lane has at least 2 slots: tokenize / attention requests are tens of milliseconds of
# work, and one slot made them queue behind each other under a crowd (issue #21's siege).
SHORT_LANE: dict = {"concurrency_id": "model", "concurrency_limit": max(2, get_settings().model_concurrency)}
LONG_LANE: dict = {"concurrency_id": "long", "concurrency_limit": get_settings().model_concurrency}
# With a generation engine (TLAB_GENERATION_URL) the decode lane admits TLAB_GENERATION_CONCURRENCY at once:
# the engine batches them, and a decode it runs is never long work here (see _is_long).
DECODE_LANE: dict = {"concurrency_id": "decode", "concurrency_limit": max(
    get_settings().model_concurrency + 1,
    get_settings().generation_concurrency if get_settings().generation_url else 0)}
# - BATCH_LANE: classify, zero-shot and search queries, whose model work is one small embedding:
#   up to TLAB_BATCH_MAX of them run at once, and backend/engines/batching.py gives the ones that arrive
#   together a single forward (TLAB_BATCH_MAX=1: one at a time, like the short lane).
BATCH_LANE: dict = {"concurrency_id": "batch",
                    "concurrency_limit": max(get_settings().batch_max, get_settings().model_concurrency)}
SHORT_DECODE_TOKENS = 64  # a greedy / sampled decode of fewer new tokens is short work
LONG_SLOT = threading.BoundedSemaphore(get_settings().model_concurrency)  # held by every job of the long lane


def _is_long(concurrency_id: str | None, args: tuple, kwargs: dict, engine_ok: bool = True) -> bool:
    """Does this job belong to the long lane? A decode is long from 64 tokens, or with beams / samples,
    unless the generation engine does the work (`engine_ok`: False when the request must run here,
    e.g. a model-box model)."""
    if concurrency_id == "long":
        return True
    if concurrency_id != "decode":
        return False
    from backend.decoding import parse_settings, runs_on_engine

    try:
        raw = kwargs.get("settings", args[1] if len(args) > 1 else None)
        s = parse_settings(raw)
    except LabError:
        return False  # refused at once by the handler itself
    if engine_ok and runs_on_engine(s):  # the engine does the work (last health check: up); no network here
        return False
    return s.max_new_tokens >= SHORT_DECODE_TOKENS or s.strategy == "beam" or s.num_return_sequences > 1


def decode_lane_reader(fn, reader):
    """Let a tab's own handler join the decode lane: `reader(args)` -> (settings dict, may the engine
    run it) from the handler's positional inputs, so admission can tell a long decode from a short one."""
    fn.lane_settings = reader
    return fn


def engine_lane_reader(fn, reader):
    """Let a handler whose generation the engine may do (summaries, translations, the corpus reader,
    Pipelines generation) join the decode lane when the page has an engine (`engine_lane()`):
    `reader(args)` -> will the engine do it (its last health check; no network). Admission counts
    it as long work when it will run here, and the handler takes the long slot (`engine_or_long_slot`)."""
    fn.lane_engine = reader
    return fn


def engine_lane() -> dict:
    """The lane of an `engine_lane_reader` handler, read when the page is built: the decode lane with
    a generation engine (it batches the class's requests), the long lane without one."""
    global _ENGINE_LANE
    _ENGINE_LANE = bool(get_settings().generation_url)
    return DECODE_LANE if _ENGINE_LANE else LONG_LANE


_ENGINE_LANE = False  # what the last page built chose: the handlers must agree with their lane


@contextlib.contextmanager
def engine_or_long_slot(free: bool, what: str):
    """Inside a handler of `engine_lane()`: in the decode lane, long work that stays in this process
    first takes the long lane's slot (`free`: it needs none, the engine does it, or it is short);
    in the long lane (no engine) the handler holds it already."""
    with long_slot_for(_ENGINE_LANE and not free, what):
        yield


@contextlib.contextmanager
def long_slot_for(long: bool, what: str = "generation"):
    """Inside a decode-lane tab handler: hold the long lane's slot for in-process long work (what
    `_lane_slot` does for /decode), waiting at most one request budget for it."""
    if not long:
        yield
        return
    waited = get_settings().time_budget_s
    if not LONG_SLOT.acquire(timeout=waited):
        raise InputError(f"The long-job lane stayed busy for {waited:g} s: this {what} runs here, not on the "
                         "generation engine. Try again in a minute.")
    try:
        yield
    finally:
        LONG_SLOT.release()


@contextlib.contextmanager
def _lane_slot(b: budget.Budget, long: bool):
    """Hold the long lane's slot while a long job runs; wait for it, stopping on a cancel."""
    if not long:
        yield
        return
    while not LONG_SLOT.acquire(timeout=CANCEL_POLL_S):
        if b.cancelled:
            raise budget.Cancelled("The request was cancelled while it waited for the long-job lane.")
    try:
        b.restart()  # the time budget counts the work, not the wait
        yield
    finally:
        LONG_SLOT.release()


# ---------------------------------------------------------------- fair admission to the long lane
# A crowd once kept the long lane from finishing anything (0 of 18 long requests in 3 minutes):
# one client could queue any number of long jobs. `admit_fairly(demo)` checks each request as it
# joins Gradio's queue: a visitor (session) has at most one long job waiting or running, and at
# most LONG_WAITING_MAX long jobs wait at once, all visitors together; beyond that the request is
# refused at once with a readable message (Gradio's validation answer: the page shows it, and
# gradio_client raises it as a ValidationError) instead of waiting behind work that cannot end.
LONG_WAITING_MAX = 6  # ~6 budgets of work at most ahead of a newcomer


def _event_is_long(fn, data) -> bool:
    concurrency_id = getattr(fn, "concurrency_id", None)
    if concurrency_id not in ("long", "decode"):
        return False
    reader, engine_reader, f = None, None, getattr(fn, "fn", None)
    while f is not None and reader is None and engine_reader is None:  # through guard's wrappers to the handler
        reader, engine_reader = getattr(f, "lane_settings", None), getattr(f, "lane_engine", None)
        f = getattr(f, "__wrapped__", None)
    if engine_reader is not None and concurrency_id == "decode":  # long unless the engine will do it
        try:
            return not engine_reader(tuple(data or ()))
        except Exception:  # noqa: BLE001  values the handler itself will refuse
            return False
    if reader is not None and concurrency_id == "decode":  # a tab's handler: its settings from its inputs
        try:
            settings, engine_ok = reader(tuple(data or ()))
        except Exception:  # noqa: BLE001  values the handler itself will refuse
            return False
        return _is_long(concurrency_id, (None, settings), {}, engine_ok)
    return _is_long(concurrency_id, tuple(data or ()), {})


def lane_refusal(events, session_hash: str | None, fn, data) -> str | None:
    """Why a request may not join the queue now (None: it may). `events`: the queue's events
    (waiting or running) as (session_hash, fn, data, running)."""
    if not _event_is_long(fn, data):
        return None
    long_events = [(s, running) for s, f, d, running in events if _event_is_long(f, d)]
    if session_hash and any(s == session_hash for s, _ in long_events):
        return ("You already have a long job (a build, a summary, a long generation) waiting or "
                "running: wait for it to finish, or press Stop, then start the next one.")
    if sum(1 for _, running in long_events if not running) >= LONG_WAITING_MAX:
        return (f"The long-job lane is full ({LONG_WAITING_MAX} long jobs are waiting). Try again in a "
                "minute; short actions (classify, tokenize, attention, search) still answer at once.")
    return None


def admit_fairly(demo) -> None:
    """Refuse, as a request joins the queue, what `lane_refusal` refuses (see above)."""
    from gradio import route_utils

    queue = demo._queue
    push = queue.push

    async def fair_push(body, request, username):
        try:
            fn = route_utils.get_fn(queue.blocks, None, body)
        except Exception:  # an unknown fn_index: Gradio's own push answers it
            return await push(body, request, username)
        why = lane_refusal(_queue_events(queue), body.session_hash, fn, body.data)
        for _ in range(FINISHING_POLLS):  # a job whose answer the client already has may still be closing
            if why is None:
                break
            await asyncio.sleep(FINISHING_POLL_S)
            why = lane_refusal(_queue_events(queue), body.session_hash, fn, body.data)
        if why is None:
            return await push(body, request, username)
        _input_log().info("lane: %s", why[:120])
        return False, [{"__type__": "validate", "is_valid": False, "message": why,
                        "parameter_name": "lane"}], "validator_error"

    queue.push = fair_push


def _waiting_ids(queue) -> set[str]:
    return {e._id for q in list(queue.event_queue_per_concurrency_id.values()) for e in list(q.queue)}


FINISHING_POLLS, FINISHING_POLL_S = 20, 0.05  # up to 1 s for a finished job to leave the queue's books


def _queue_events(queue) -> list[tuple]:
    """(session, fn, data, running) of the events waiting in a lane or running now. Gradio keeps
    a finished event in `event_ids_to_events` until after its answer is sent (it closes it out
    after): such an event is neither waiting nor in `active_jobs`, and does not count."""
    waiting = _waiting_ids(queue)
    active = {e._id for job in list(queue.active_jobs) if job for e in job}
    return [(e.session_hash, e.fn, getattr(e.data, "data", None), e._id not in waiting)
            for e in list(queue.event_ids_to_events.values()) if e._id in waiting or e._id in active]


# ---------------------------------------------------------------- budget and cancel
# A cancel (the Stop button, `job.cancel()` from gradio_client, a closed page) cancels the
# event's asyncio task; a sync handler's worker thread is not told. Gradio forgets a cancelled
# event at once (`blocks._queue.event_ids_to_events` loses its id, a closed session sets
# `Event.alive = False`), so a watcher thread polls that and sets the request's stop flag;
# the backend's checks then end the work within one step.
CANCEL_POLL_S = 0.2
_WATCHED: dict[int, tuple[budget.Budget, object, str, object]] = {}
_WATCH_LOCK = threading.Lock()
_WATCHER: threading.Thread | None = None


def _gradio_event():
    """(queue, event id, Event) of the event this thread runs, or None outside a queued event."""
    from gradio.context import LocalContext

    blocks = LocalContext.blocks.get(None)
    event_id = LocalContext.event_id.get(None)
    queue = getattr(blocks, "_queue", None)
    events = getattr(queue, "event_ids_to_events", None)
    if not event_id or events is None or event_id not in events:
        return None
    return queue, event_id, events[event_id]


def _watch() -> None:
    import time

    while True:
        time.sleep(CANCEL_POLL_S)
        with _WATCH_LOCK:
            watched = list(_WATCHED.values())
        for b, queue, event_id, event in watched:
            if not getattr(event, "alive", True) or queue.event_ids_to_events.get(event_id) is not event:
                b.cancel()


def _register(b: budget.Budget) -> str | None:
    """Watch this thread's event for a cancel -> the event's concurrency id (None: no event)."""
    global _WATCHER
    found = _gradio_event()
    if found is None:
        return None
    with _WATCH_LOCK:
        _WATCHED[id(b)] = (b, *found)
        if _WATCHER is None:
            _WATCHER = threading.Thread(target=_watch, name="tlab-cancel-watch", daemon=True)
            _WATCHER.start()
    return getattr(found[2], "concurrency_id", None) or "?"


def _unregister(b: budget.Budget) -> None:
    with _WATCH_LOCK:
        _WATCHED.pop(id(b), None)


@contextlib.contextmanager
def request_budget(args: tuple = (), kwargs: dict | None = None):
    """The request's budget (deadline + stop flag), watched for a cancel while the handler runs;
    a long job first waits for the long lane's slot."""
    with budget.scope() as b:
        lane = _register(b)
        try:
            with _lane_slot(b, _is_long(lane, args, kwargs or {})):
                yield b
        finally:
            _unregister(b)


def bounded_steps(gen, b: budget.Budget):
    """Drive a handler's generator one step at a time under budget `b` (each step may run in
    another worker thread, so the budget is entered per step); closing it stops the work."""
    watched = False
    slot = contextlib.ExitStack()
    try:
        while True:
            with budget.scope(budget=b):
                if not watched:
                    watched = True
                    slot.enter_context(_lane_slot(b, _register(b) == "long"))
                try:
                    item = next(gen)
                except StopIteration:
                    return
            yield item
    finally:
        _unregister(b)
        b.cancel()  # closed early (a cancel) or finished: nothing of it may keep running
        gen.close()
        slot.close()

_SOURCE_WORDS = {
    "package": "packaged offline model",
    "cache": "local Hugging Face cache",
    "hub": "Hugging Face Hub",
    "local-dir": "your directory",
    "session": "trained in your session",
}


class CheckboxGroup(gr.CheckboxGroup):
    """gr.CheckboxGroup that passes a caller's value unchanged, so the handler refuses (or ignores) a
    wrong one in its own words (Gradio's own check answers "Value: 'x' (type: <class 'str'>) is not in
    the list of choices", naming neither the parameter nor what to send)."""

    is_template = True

    def preprocess(self, payload):
        return payload


def user_errors(fn):
    """Show a LabError's message in the UI (gr.Error) instead of a traceback.

    The handler runs under its request's time budget, and a cancel stops it (see above).

    `functools.wraps` keeps the signature so Gradio still injects gr.Request / gr.Progress.
    """
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from bounded_steps(fn(*args, **kwargs), budget.Budget())
            except LabError as exc:
                raise readable_error(exc, fn.__name__) from None

        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with request_budget(args, kwargs):
                return fn(*args, **kwargs)
        except LabError as exc:
            raise readable_error(exc, fn.__name__) from None

    return wrapper


def file_path(file):
    """An upload as Gradio or a client hands it (path, FileData dict, object) -> its path.

    Anything else comes back as it is, for the backend to refuse with a readable message."""
    if file is None or isinstance(file, str):
        return file
    if isinstance(file, dict):
        return file.get("path") or file.get("name")
    return getattr(file, "path", None) or getattr(file, "name", None) or file


def short(text: str, n: int = 40) -> str:
    """Text cut to `n` characters with an ellipsis, for legends and table cells."""
    return text if len(text) <= n else text[: n - 1] + "…"


def model_badge(described: dict | None, seconds: float | None = None) -> str:
    """One markdown line naming the checkpoint that served a result, where from, and how."""
    if not described:
        return ""
    source = _SOURCE_WORDS.get(described.get("source") or "", md_text(described.get("source") or "?"))
    parts = [f"Served by **{md_text(described.get('checkpoint'))}** ({source}"]
    if described.get("device"):
        parts.append(md_text(f", {described['device']} {described.get('dtype') or ''}".rstrip()))
    parts.append(")")
    method = described.get("method")
    if method and method != config.METHOD_MODEL:  # how it is served, in the words of config.METHOD_WORDS
        parts.append(f" · *{md_text(config.method_name(method))}*")
        if method == config.METHOD_FINETUNED:
            acc, f1 = described.get("test_accuracy"), described.get("test_f1")
            score = (f", test accuracy {acc:.2f}" if isinstance(acc, (int, float))
                     else f", test entity F1 {f1:.2f}" if isinstance(f1, (int, float)) else "")
            parts.append(md_text(f": {config.method_text(method)}; trained on "
                                 f"{described.get('trained_on') or 'shipped data'}{score}"))
        elif method == config.METHOD_SESSION:
            parts.append(md_text(f": {described.get('classifier') or 'your classifier'}, from the Train tab"))
        else:
            parts.append(md_text(f": {config.method_text(method, config.role_name(described.get('role')))}"))
    if seconds is not None:
        parts.append(f" · {seconds:.2f} s")
    return "".join(parts)


# ---------------------------------------------------------------- input errors and escaping
def _input_log() -> logging.Logger:
    log = logging.getLogger("transformers_lab.input")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s input error in %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


# ---------------------------------------------------------------- a failed event, in the page
# Gradio marks every output of a failed event with a red "Error" badge and keeps the old result
# under it. `clear_on_error` chains a `.failure` listener that blanks the outputs and shows the
# message once, inline, where the result would be. The failed handler's message reaches that
# listener through `_LAST_ERROR`, keyed by the browser session (bounded: a vanished session's
# entry is pushed out by newer ones).
_LAST_ERROR: "collections.OrderedDict[str, str]" = collections.OrderedDict()
_LAST_ERROR_MAX = 512
_ERROR_LOCK = threading.Lock()


def _remember_error(message: str) -> None:
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)
    session = getattr(request, "session_hash", None)
    if not session:
        return
    with _ERROR_LOCK:
        _LAST_ERROR[session] = message
        _LAST_ERROR.move_to_end(session)
        while len(_LAST_ERROR) > _LAST_ERROR_MAX:
            _LAST_ERROR.popitem(last=False)


def error_box(elem_id: str | None = None) -> gr.Markdown:
    """Where a tab's error shows, inline, above its results (hidden until an event fails)."""
    return gr.Markdown("", visible=False, elem_id=elem_id, elem_classes=["tlab-error"])


def clear_on_error(event, outputs: list, box: gr.Markdown) -> None:
    """After `event` fails: blank `outputs` and show the error once in `box`; after it
    succeeds: hide `box`. Put `box` (from `error_box()`) where the result would be."""

    def failed(request: gr.Request):
        with _ERROR_LOCK:
            message = _LAST_ERROR.pop(getattr(request, "session_hash", None) or "", None)
        if message is None:  # a Stop (a cancel fails the event too), or a bug Gradio reports itself
            return [gr.update() for _ in outputs] + [gr.update(value="", visible=False)]
        return [None] * len(outputs) + [gr.update(value=f"**⚠️ {md_text(message)}**", visible=True)]

    event.failure(failed, None, [*outputs, box], queue=False, api_visibility="private")
    event.success(lambda: gr.update(value="", visible=False), None, box, queue=False, api_visibility="private")


def readable_error(exc: Exception, where: str = "") -> gr.Error:
    """A LabError as a gr.Error: one log line, no traceback (`print_exception=False`; any
    other exception is a bug, and Gradio logs it with its traceback).

    Gradio renders an error message as HTML in the browser's toast and messages may quote
    the caller's input, so < > & are escaped: a quoted value can never become markup."""
    message = str(exc)
    _remember_error(message)
    _input_log().info("%s: %s", where or "?", message.replace("\n", " ")[:300])
    # Short-lived: the message also stays inline (clear_on_error), and toasts that outlive the
    # error they report pile up ("Error (2)" holding a message about an input already fixed).
    return gr.Error(html.escape(message, quote=False), duration=5, print_exception=False)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!#|~:@$])")  # CommonMark lets any ASCII punctuation be escaped


def md_text(text) -> str:
    """User or corpus text, safe inside Markdown: HTML escaped, and the characters that make
    links, images, code or emphasis backslash-escaped (':' and '@' too, so no URL or address
    is auto-linked): `![x](http://...)` shows as text and the browser fetches nothing."""
    text = html.escape(str(text if text is not None else ""), quote=False)  # no &#x27;: its # would be escaped
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")
    return re.sub(r"(?i)\bwww\.", lambda m: m.group(0)[:-1] + "\\.", text)


# ---------------------------------------------------------------- widgets for the API
# Gradio's widgets check or convert a value before the handler sees it: a Slider refuses "abc"
# with "Could not preprocess ... (named run_qa)", naming an internal handler; a Textbox turns a
# dict into its repr. These pass what an API caller sent unchanged, so the backend's validation
# layer reads it and names the parameter as the API lists it. In the browser (`is_template`:
# the same front-end component) they behave exactly like Gradio's.
def _as_sent(self, payload):
    """The value exactly as the caller sent it: the backend's validation reads and names it."""
    return payload


# One line each: Gradio's metaclass reads every component class from this file's source, and its
# front-end picks the widget by the Gradio base class, so these stay plain subclasses.
class Slider(gr.Slider):
    is_template, preprocess = True, _as_sent


class Number(gr.Number):
    is_template, preprocess = True, _as_sent


class Checkbox(gr.Checkbox):
    is_template, preprocess = True, _as_sent


class Radio(gr.Radio):
    is_template, preprocess = True, _as_sent


class Dropdown(gr.Dropdown):
    is_template, preprocess = True, _as_sent


class Textbox(gr.Textbox):
    is_template, preprocess = True, _as_sent


def model_box(elem_id: str | None = None, info: str | None = None) -> gr.Textbox:
    """The model box: empty by default, so an API caller may leave `model_box` out."""
    return Textbox(label="Model", value="", placeholder="profile default", info=info, elem_id=elem_id)


def File(**kwargs) -> gr.File:
    """gr.File whose API value, when it is not an uploaded file (a bare path, a dict without
    Gradio's file marker), gets a readable message naming `file` instead of a validation dump.
    (A factory, not a subclass: Gradio reads a component's props from its __init__ signature.)"""
    f = gr.File(**kwargs)
    if f.data_model is FileData:
        f.data_model = _UploadedFile
    return f


from gradio.data_classes import FileData  # noqa: E402


class _UploadedFile(FileData):
    model_config = {**FileData.model_config, "title": "FileData"}  # the API schema stays Gradio's

    @classmethod
    def model_validate(cls, obj, *args, **kwargs):
        try:
            return FileData.model_validate(obj, *args, **kwargs)
        except ValueError:  # pydantic's ValidationError is a ValueError
            message = "file must be an uploaded file: in gradio_client, pass handle_file(path)."
            _remember_error(message)
            raise gr.Error(message, print_exception=False) from None


def raw_json(label: str = "Raw result (JSON: what the API returns)", **kwargs) -> gr.JSON:
    """The API's raw result, one click away but collapsed: the formatted view comes first."""
    with gr.Accordion(label, open=False):
        return gr.JSON(label="JSON", **kwargs)


# ---------------------------------------------------------------- figures: what to notice, and keep them
# Every Plotly figure gets, under it, a visible "PNG" / "SVG" pair (Plotly.downloadImage, drawn in
# the browser: no server, no network) and its "What to notice" line. The line travels inside the
# figure (`layout.meta.notice`, set by `notice()` where the figure is built from the result), so a
# plots module says it once and no tab wires an extra output. `figure_tools()` is placed once per
# page (app.py); its script watches the page for plots as Gradio draws and redraws them.
NOTICE_PREFIX = "What to notice: "

FIGURE_JS = r"""
if (!window.__tlabFigures) {
  window.__tlabFigures = true;
  const nameOf = (div) => {
    const host = div.parentElement ? div.parentElement.closest('[id]') : null;
    const id = host ? host.id.replace(/^component-/, 'figure-') : 'figure';
    return id.replace(/[^A-Za-z0-9_-]+/g, '-') || 'figure';
  };
  const save = (div, format) => {
    if (!window.Plotly || !div._fullLayout) return;
    window.Plotly.downloadImage(div, {format: format, filename: nameOf(div),
      width: div._fullLayout.width, height: div._fullLayout.height, scale: format === 'png' ? 2 : 1});
  };
  // Plotly writes clip paths and gradients as url('<page address>#id') (Gradio's page has a <base>).
  // A link written into the address bar after a figure is drawn (history.replaceState) leaves those
  // pointing at the old address, and the browser then draws the plot area empty: axes, no marks.
  // Point them at the address the page has now (links.py calls this after each replaceState).
  const fixUrls = () => {
    const here = location.href.split('#')[0];
    for (const el of document.querySelectorAll('.js-plotly-plot [clip-path], .js-plotly-plot [fill^="url("], '
                                               + '.js-plotly-plot [style*="url("]')) {
      for (const attr of ['clip-path', 'fill', 'style']) {
        const v = el.getAttribute(attr);
        if (!v || v.indexOf('url(') < 0) continue;
        const w = v.replace(/url\((['"]?)([^'")#]*)#([^'")]+)\1\)/g,
                            (all, q, addr, id) => (addr && addr !== here ? `url(${q}${here}#${id}${q})` : all));
        if (w !== v) el.setAttribute(attr, w);
      }
    }
  };
  window.__tlabFixUrls = fixUrls;
  const tidy = () => {
    for (const div of document.querySelectorAll('.js-plotly-plot')) {
      const holder = div.parentElement;
      if (!holder) continue;
      let bar = holder.querySelector(':scope > .tlab-fig-bar');
      if (!bar) {
        bar = document.createElement('div');
        bar.className = 'tlab-fig-bar';
        const note = document.createElement('p');
        note.className = 'tlab-notice';
        note.dataset.text = '';
        const keep = document.createElement('span');
        keep.className = 'tlab-fig-keep';
        keep.append('Download: ');
        for (const format of ['png', 'svg']) {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = 'tlab-fig-save';
          b.dataset.format = format;
          b.textContent = format.toUpperCase();
          b.title = 'Download this figure as ' + format.toUpperCase();
          keep.append(b);
        }
        bar.append(note, keep);
        holder.append(bar);
        bar.addEventListener('click', (ev) => {
          const b = ev.target.closest('button.tlab-fig-save');
          const plot = holder.querySelector(':scope > .js-plotly-plot');
          if (b && plot) save(plot, b.dataset.format);
        });
      }
      const meta = div.layout && div.layout.meta;
      const text = meta && typeof meta.notice === 'string' ? meta.notice : '';
      const note = bar.querySelector('.tlab-notice');
      if (note.dataset.text !== text) {
        note.dataset.text = text;
        const head = document.createElement('strong');
        head.textContent = '__PREFIX__';
        note.replaceChildren(head, document.createTextNode(text));
      }
      note.hidden = !text;
      const keep = bar.querySelector('.tlab-fig-keep');
      const empty = !(div.data && div.data.length);  // a placeholder ("Run beam search to see ...")
      if (keep.hidden !== empty) keep.hidden = empty;
      const name = nameOf(div);
      if (bar.dataset.figure !== name) bar.dataset.figure = name;
    }
    fixUrls();
  };
  // On a phone a result table keeps every word whole: its width grows to what its widest word
  // needs in its column (the columns keep their shares), and it scrolls inside its own box.
  // (Gradio rewrites the table's style attribute, so the widths live in a stylesheet of our own.)
  const canvas = document.createElement('canvas').getContext('2d');
  const sheet = document.head.appendChild(document.createElement('style'));
  const widths = {};
  let tables = 0;
  const fitTables = () => {
    const phone = window.innerWidth <= __PHONE__;
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      if (!wrap.dataset.tlabFit) wrap.dataset.tlabFit = String(++tables);
      if (!phone || wrap.offsetParent === null) continue;
      const heads = [...wrap.querySelectorAll('thead th')];
      const total = wrap.getBoundingClientRect().width;
      if (!heads.length || !total) continue;
      let needed = 0;
      const rows = [heads, ...[...wrap.querySelectorAll('[role=row], .virtual-row')].map(r => [...r.children])];
      for (const cells of rows) {
        cells.forEach((cell, i) => {
          const head = heads[i];
          const text = cell.innerText ? cell.innerText.trim() : '';
          if (!head || !text) return;
          const style = getComputedStyle(cell.querySelector('span, div') || cell);
          canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
          const word = Math.max(...text.split(/\s+/).map(w => canvas.measureText(w).width));
          const cs = getComputedStyle(cell);
          const pad = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) + (cell === head ? 28 : 6);
          const share = head.getBoundingClientRect().width / total;
          if (share > 0) needed = Math.max(needed, (word + pad) / share);
        });
      }
      const want = Math.min(Math.ceil(needed), 3000);
      const id = wrap.dataset.tlabFit;
      if (want > total + 1 && Math.abs(want - (widths[id] || 0)) > 2) widths[id] = want;
    }
    const css = phone ? Object.entries(widths).map(([id, w]) =>
      `.table-wrap[data-tlab-fit="${id}"] { min-width: ${w}px !important; }`).join('\n') : '';
    if (sheet.textContent !== css) sheet.textContent = css;
  };
  let pending = false;
  const later = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; tidy(); fitTables(); }, 150);
  };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', later);
  tidy();
}
"""

PHONE_PX = 760  # at this width and below, tables keep whole words and scroll inside themselves

FIGURE_CSS = """
.tlab-fig-bar { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between;
  gap: 0.3em 1em; padding: 4px 8px 6px; font-size: 0.9em; }
.tlab-notice { margin: 0; flex: 1 1 18em; }
.tlab-fig-keep { white-space: nowrap; color: var(--body-text-color-subdued); }
.tlab-fig-save { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 0 8px;
  margin-left: 6px; font-size: 0.9em; cursor: pointer; }
.tlab-notice-md { font-size: 0.9em; }
/* Gradio floats a plot's label over its top-left corner, on the figure's own title: keep it above */
.block:has(> label.block-label) > .js-plotly-plot { margin-top: 26px; }
@media (max-width: 760px) {
  .table-container, .prose table { overflow-x: auto; }
  .prose table { display: block; max-width: 100%; }
  .prose td, .prose th { word-break: normal; overflow-wrap: normal; }
  .js-plotly-plot, .js-plotly-plot .plot-container { max-width: 100%; }
  /* a plot beside a table or another plot takes the whole width: side by side, both were crushed */
  .row:has(.js-plotly-plot) { flex-wrap: wrap; }
  .row:has(.js-plotly-plot) > * { flex: 1 1 100% !important; min-width: 100% !important; }
}
"""


def notice(fig, text: str):
    """Attach a figure's "What to notice" line (shown under it by figure_tools' script) and
    return the figure. Write it from the figure's own data: it must be true for this result."""
    if fig is None or not text:
        return fig
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    fig.update_layout(meta={**meta, "notice": str(text)})
    return fig


def notice_of(fig) -> str:
    """The "What to notice" line a figure carries ('' when none)."""
    meta = getattr(getattr(fig, "layout", None), "meta", None)
    return meta.get("notice", "") if isinstance(meta, dict) else ""


def figure_tools() -> gr.HTML:
    """Place once per page: PNG / SVG buttons and the "What to notice" line under every plot
    (its CSS goes into the page head: it styles elements outside this component)."""
    return gr.HTML("", js_on_load=FIGURE_JS.replace("__PREFIX__", NOTICE_PREFIX).replace("__PHONE__", str(PHONE_PX)),
                   head=f"<style>{FIGURE_CSS}</style>", elem_id="tlab-figure-tools", visible="hidden")


def notice_line(text: str) -> str:
    """A "What to notice" line as Markdown, for a figure that is not a plot (chips, a table)."""
    return f"**{NOTICE_PREFIX.strip()}** {md_text(text)}" if text else ""
