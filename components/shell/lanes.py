"""The lanes (Gradio concurrency groups) and which request is long work: the admission policy.

How a request joins its lane and waits for the long slot; what `admission` refuses at the queue's
door. Nothing here touches a Gradio internal: `gradio_patches` hands admission the queue's events.
"""

from __future__ import annotations

import contextlib
import threading

from backend.runtime import budget, clients
from backend.runtime.config import get_settings
from backend.runtime.errors import InputError
from backend.runtime.plan import Plan
from components.shell import gradio_patches, plans

CANCEL_POLL_S = 0.2  # how often a waiting or running job looks at its stop flag

# ---------------------------------------------------------------- lanes
# Four lanes, each a Gradio concurrency group (its slots: requests it runs at once):
# - SHORT_LANE: answers in a second or two (tokenize, attention, anatomy, one decode of under 64 tokens),
#   so it never waits behind a long job; at least 2 slots, or TLAB_MODEL_CONCURRENCY;
# - LONG_LANE: index builds, the index comparison, the retriever-reader, summaries, translations, NER and
#   QA by the instruct fallback, generation, the decoding comparison, training; TLAB_MODEL_CONCURRENCY + 1
#   slots, and every job in it holds `LONG_SLOT` (below);
# - DECODE_LANE (`/decode`, and the handlers a generation server may serve: `server_lane`): a decode is
#   short or long depending on its settings, which a static group cannot know; a long one also takes
#   `LONG_SLOT` before it runs, so it queues behind long work, never in front of short work;
# - BATCH_LANE: classify, zero-shot and search queries, whose model work is one small embedding: requests
#   that arrive together share one forward.
# Jobs running at once share the cores: backend.runtime.budget.fair_threads gives each its share of torch
# threads, and every job stops at its time budget (TLAB_TIME_BUDGET_S) or on a cancel.
# The short lane has at least 2 slots: tokenize / attention requests are tens of milliseconds of
# work, and one slot made them queue behind each other under a crowd (bench/siege.py).
SHORT_LANE: dict = {"concurrency_id": "model", "concurrency_limit": max(2, get_settings().model_concurrency)}
# The long lane has one slot more than TLAB_MODEL_CONCURRENCY, and on a shared server (client share
# under 1) an address runs at most TLAB_MODEL_CONCURRENCY long jobs at once (`fair_pick`): the last slot
# is another address's, so an honest visitor's short summary never waits behind a stranger's pair of
# maximum-cost jobs (225 s without that rule; docs/lanes.md states the worst wait).
LONG_LANE: dict = {"concurrency_id": "long", "concurrency_limit": get_settings().model_concurrency + 1}
# With a generation server (TLAB_GENERATION_URL) the decode lane admits TLAB_GENERATION_CONCURRENCY at once:
# the server batches them, and a decode it runs is never long work here (its plan says so).
DECODE_LANE: dict = {"concurrency_id": "decode", "concurrency_limit": max(
    get_settings().model_concurrency + 1,
    get_settings().generation_concurrency if get_settings().generation_url else 0)}
# The batch lane runs up to TLAB_BATCH_MAX requests at once, and backend/engines/embedding/batching.py gives the
# ones that arrive together a single forward (TLAB_BATCH_MAX=1: one at a time, like the short lane).
BATCH_LANE: dict = {"concurrency_id": "batch",
                    "concurrency_limit": max(get_settings().batch_max, get_settings().model_concurrency)}
LONG_SLOT = threading.BoundedSemaphore(LONG_LANE["concurrency_limit"])  # held by every job of the long lane


def server_lane() -> dict:
    """The lane of a handler whose generation the server may do (summaries, translations, the corpus
    reader, Pipelines generation), read when the page is built: the decode lane with a generation
    server (it batches the class's requests), the long lane without one. Its plan (`plans.planned`)
    says at admission whether a request is long work here; the handler then takes the long slot
    (`server_or_long_slot`)."""
    global _SERVER_LANE
    _SERVER_LANE = bool(get_settings().generation_url)
    return DECODE_LANE if _SERVER_LANE else LONG_LANE


_SERVER_LANE = False  # what the last page built chose: the handlers must agree with their lane


@contextlib.contextmanager
def server_or_long_slot(free: bool, what: str):
    """Inside a handler of `server_lane()`: in the decode lane, long work that stays in this process
    first takes the long lane's slot (`free`: it needs none, the server does it, or it is short);
    in the long lane (no server) the handler holds it already."""
    with long_slot_for(_SERVER_LANE and not free, what):
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
                         "generation server. Try again in a minute.")
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
# Sessions cost nothing to mint (one client with a session per request held every place), so
# a client (an address: backend/runtime/clients.py) holds at most its share of the lane's places
# (running + waiting), whatever number of sessions it opens.


def client_long_max() -> int:
    """Long jobs one client may have waiting or running: TLAB_CLIENT_SHARE of the lane's places."""
    return max(1, round((LONG_WAITING_MAX + get_settings().model_concurrency) * get_settings().client_share))


def _event_is_long(fn, data, plan: Plan | None = None) -> bool:
    """Is this request long work? Every job of the long lane is; in the decode lane, the request's
    plan says (`plan`: the one kept with a queued request; else planned from its values)."""
    concurrency_id = gradio_patches.lane_of(fn)
    if concurrency_id == "long":
        return True
    if concurrency_id != "decode":
        return False
    plan = plan if plan is not None else plans.plan_of(fn, data)
    return plan is not None and plan.long


def lane_refusal(events, session_hash: str | None, fn, data, plan: Plan | None = None) -> str | None:
    """Why a request may not join the queue now (None: it may). `events`: the queue's events
    (waiting or running) as (session_hash, fn, data, running, plan)."""
    if not _event_is_long(fn, data, plan):
        return None
    long_events = [(s, running) for s, f, d, running, p in events if _event_is_long(f, d, p)]
    if session_hash and any(s == session_hash for s, _ in long_events):
        return ("You already have a long job (a build, a summary, a long generation) waiting or "
                "running: wait for it to finish, or press Stop, then start the next one.")
    client = clients.client_of(session_hash) if session_hash else None
    mine = sum(1 for s, _ in long_events if client is not None and clients.client_of(s) == client)
    if mine >= client_long_max():
        return (f"Your address already has {mine} long job{'s' if mine != 1 else ''} waiting or running (from "
                f"other pages or scripts): each address (not each page) gets {client_long_max()} of the long "
                "lane's places, so that nobody can fill it. One frees up when one of those jobs ends (press "
                "Stop there to end it now); short actions (classify, tokenize, attention, search) still answer.")
    if sum(1 for _, running in long_events if not running) >= LONG_WAITING_MAX:
        return (f"The long-job lane is full ({LONG_WAITING_MAX} long jobs are waiting). Try again in a "
                "minute; short actions (classify, tokenize, attention, search) still answer at once.")
    return None


_UNPLANNED = object()


def admit(events, session_hash: str | None, fn, data, request=None, plan=_UNPLANNED) -> tuple[str | None, Plan | None]:
    """As a request joins the queue: bind its session to its client (the request's address), plan it
    once (its handler and backend use that plan; `plan`: the one the door made), then (why it is refused
    or None, the plan)."""
    clients.bind(session_hash, clients.of_request(request))
    plan = plans.plan_of(fn, data) if plan is _UNPLANNED else plan
    return lane_refusal(events, session_hash, fn, data, plan), plan


def fair_pick(waiting, running) -> int | None:
    """Which waiting long job starts next (`gradio_patches.order_lane`): the first whose address runs
    fewer long jobs than its share of the slots, so a job of an address with nothing running goes
    before another job of an address that already runs one; None when every waiting job's address
    already runs its share (the free slot waits for another address). `waiting`, `running`:
    (session_hash, event) in queue order. On a server of your own (client share 1) an address may use
    every slot."""
    settings = get_settings()
    cap = settings.model_concurrency if settings.client_share < 1.0 else LONG_LANE["concurrency_limit"]
    busy: dict[str, int] = {}
    for session, _ in running:
        client = clients.client_of(session)
        busy[client] = busy.get(client, 0) + 1
    for i, (session, _) in enumerate(waiting):
        if busy.get(clients.client_of(session), 0) < cap:
            return i
    return None


def admit_fairly(demo) -> None:
    """Refuse, as a request joins the queue, what its endpoint's contract refuses (`door.refusal`: out of
    range, over a budget) and what `lane_refusal` refuses (see above); start the long lane's jobs in
    `fair_pick`'s order."""
    from components.shell.errors import _input_log

    from components.shell import door
    from components.shell.errors import remember_refusal

    gradio_patches.remember_refusals(remember_refusal)  # a door refusal shows in the tab as a handler's error does
    gradio_patches.admit_at_queue_door(demo, admit, lambda why: _input_log().info("lane: %s", why[:120]),
                                       with_request=True, check=door.admit)
    gradio_patches.order_lane(demo, LONG_LANE["concurrency_id"], fair_pick)
    clients.use_current_session(gradio_patches.current_session_hash)  # whose request a store is serving
