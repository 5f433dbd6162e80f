"""One result life cycle per run: what the page does once a run has succeeded or failed (hide or show
its error, write or blank its link, keep it in "Your runs", a tab's own notice line), wired as ONE
handler per outcome of each event.

Each of these small jobs as its own chained handler would cost a round trip the page makes after every run,
and an entry in the page's config that every page load walks (Gradio matches each component against
every dependency when it builds the page). Here the jobs are collected while the tabs are built and
folded by `wire()`, once every tab is built: one success and one failure handler per event, each calling
its parts in the order they were added. A part that raises is logged with its traceback and leaves its
outputs as they were, as its own handler would have; the other parts still apply."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable

import gradio as gr

from components.shell import gradio_patches

OUTCOMES = ("success", "failure")
# How an event that only the page needs is declared (a hand-off, an open, a life-cycle job): no API endpoint,
# off the queue, no progress shown, and no progress targets. Gradio's page keeps a loading status for each
# component that was ever a progress target of an event that ran (by default, all of the event's outputs)
# and re-applies every one of them on every later status message of any run: a hidden event's outputs need
# none (Gradio's own `show_progress_on`, given as empty).
NO_PROGRESS = dict(show_progress="hidden", show_progress_on=())
PAGE_ONLY = dict(api_visibility="private", queue=False, **NO_PROGRESS)
_log = logging.getLogger("tlab.lifecycle")


@dataclass
class Part:
    fn: Callable
    inputs: list
    outputs: list


def _no_progress(fn: Callable) -> Callable:
    """A part cannot report progress (it runs inside one handler with others): refused here, loudly."""
    if gradio_patches.special_arguments(fn)[1] is not None:
        raise ValueError(f"{getattr(fn, '__name__', fn)}: a life-cycle job cannot report progress")
    return fn


@dataclass
class _Event:
    event: object
    root: object  # the Blocks the event belongs to: a build that never wired leaves nothing for the next
    parts: dict = field(default_factory=lambda: {o: [] for o in OUTCOMES})


_EVENTS: list[_Event] = []


def after(event, outcome: str, fn: Callable, inputs=None, outputs=None) -> None:
    """Run `fn(*inputs)` after `event` ends in `outcome` ("success" or "failure"), writing `outputs`,
    as `event.success(fn, inputs, outputs)` would (a gr.Request parameter is filled as Gradio fills
    it); folded with the event's other parts by `wire()`."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
    part = Part(_no_progress(fn), list(inputs or []), list(outputs or []))
    for held in _EVENTS:
        if held.event is event:
            held.parts[outcome].append(part)
            return
    held = _Event(event, gradio_patches.page_being_built())
    held.parts[outcome].append(part)
    _EVENTS.append(held)


def pending() -> int:
    """How many events still wait for `wire()` (a page built without it would have no life cycle)."""
    return len(_EVENTS)


def reset() -> None:
    _EVENTS.clear()


def _unique(blocks) -> list:
    out: list = []
    for b in blocks:
        if all(b is not o for o in out):
            out.append(b)
    return out


def _index(blocks: list, b) -> int:
    return next(i for i, o in enumerate(blocks) if o is b)


def _is_update(value) -> bool:
    return isinstance(value, dict) and value.get("__type__") == "update"


def merged(old, new):
    """What an output shared by two parts gets: the later part's word, but a gr.skip() (or an empty
    gr.update()) leaves the earlier one, and an update without a value keeps the earlier value (one
    part blanks a table, another hides it: blanked and hidden, as the two handlers did)."""
    if _is_update(new) and len(new) == 1:
        return old
    if _is_update(old) and _is_update(new):
        return {**old, **new}
    if _is_update(new) and "value" not in new and not _is_update(old):
        return {**new, "value": old}
    return new


def folded(parts: list[Part]) -> tuple[Callable, list, list]:
    """One handler doing every part's job: its function, inputs and outputs (each block once)."""
    inputs = _unique(b for p in parts for b in p.inputs)
    outputs = _unique(b for p in parts for b in p.outputs)
    slots = [([_index(inputs, b) for b in p.inputs], [_index(outputs, b) for b in p.outputs]) for p in parts]

    def run(request: gr.Request, *values):
        out = [gr.skip() for _ in outputs]
        for part, (ins, outs) in zip(parts, slots):
            args = gradio_patches.special_arguments(part.fn, [values[i] for i in ins], request)[0]
            try:
                got = part.fn(*args)
            except Exception:  # a bug in one job: logged, and the others still apply
                _log.exception("life-cycle part %s failed", getattr(part.fn, "__name__", part.fn))
                continue
            got = [got] if len(outs) == 1 else list(got or [])
            for i, value in zip(outs, got):
                out[i] = merged(out[i], value)
        return out[0] if len(out) == 1 else out

    run.__name__ = "after_" + "_".join(getattr(p.fn, "__name__", "part").strip("<>") for p in parts)[:80]
    run.parts = parts  # what the folded handler does, for tests and for reading the config
    return run, inputs, outputs


def _event_targets(event, outputs: list) -> tuple:
    """The handler's outputs that are also the event's own progress targets. The handler's status messages
    on them replace the status the event left there (Gradio draws "Error" over each target of a failed
    event, beside the one inline message); it adds no other component to what the page keeps a status for."""
    ids = set(gradio_patches.event_output_ids(event, progress=True))
    return tuple(o for o in outputs if gradio_patches.component_id(o) in ids)


def wire() -> None:
    """Fold and attach every event's parts: call once, inside the Blocks, after every tab is built."""
    root = gradio_patches.page_being_built()
    for held in _EVENTS:
        if held.root is not root:
            continue  # a page built elsewhere (a test's Blocks) that never called wire
        for outcome in OUTCOMES:
            if held.parts[outcome]:
                fn, inputs, outputs = folded(held.parts[outcome])
                getattr(held.event, outcome)(fn, inputs, outputs, **{
                    **PAGE_ONLY, "show_progress_on": _event_targets(held.event, outputs)})
    _EVENTS.clear()
