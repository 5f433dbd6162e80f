"""One plan per request: a handler declares how its requests are planned, the shell plans each
request once as it joins the queue, and the handler and its backend entry point use that plan.

A plan (`backend.runtime.plan.Plan`: may the generation server do it, is it long work here, the
note its result will carry) comes from the tab's backend (`pipelines.plan`, `decoding.plan`...),
which knows where its work runs; the shell only keeps it with the request: admission reads it to
choose the lane's rules, the request budget reads it to take the long slot, and the handler hands
it down. A call that did not come through the queue (a test, a script) is planned when it runs.
"""

from __future__ import annotations

from backend.runtime.plan import Plan
from components.shell import gradio_patches


def planned(fn, planner, shell_slot: bool = False):
    """Declare `planner(args: tuple) -> Plan` for `fn`'s requests (its positional inputs, as the page
    or the API sends them). `shell_slot`: the request budget takes the long slot for a long plan (an
    API handler in the decode lane); otherwise the handler takes it where its long work starts."""
    fn.plan_request = planner
    fn.shell_slot = shell_slot
    return fn


def declared(fn, attribute: str):
    """What the shell declared on `fn` under `attribute` (its planner, its contract), looked up through Gradio's
    BlockFunction (which holds the handler in .fn) and the guard's and user_errors' wrappers; None: nothing."""
    f = getattr(fn, "fn", fn)
    while f is not None:
        found = getattr(f, attribute, None)
        if found is not None:
            return found
        f = getattr(f, "__wrapped__", None)
    return None


def planner_of(fn):
    """The planner declared for `fn`."""
    return declared(fn, "plan_request")


def plan_of(fn, data) -> Plan | None:
    """Plan one request of `fn` from the values it was sent (None: `fn` declares no planner, or the
    values are such that the handler will refuse them in its own words)."""
    planner = planner_of(fn)
    if planner is None:
        return None
    try:
        return planner(tuple(data or ()))
    except Exception:  # noqa: BLE001  values the handler itself will refuse
        return None


def admitted() -> Plan | None:
    """The plan made for the request this thread serves when it joined the queue (None outside one)."""
    found = gradio_patches.current_event()
    return getattr(found[2], "tlab_plan", None) if found else None


def current(planner, args: tuple) -> Plan:
    """Inside a handler: the plan admission made for this request, or, for a call that did not come
    through the queue, `planner(args)` now."""
    plan = admitted()
    return plan if plan is not None else planner(tuple(args))
