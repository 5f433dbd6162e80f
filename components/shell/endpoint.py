"""An endpoint, declared once: a tab says *what* (name, handler, inputs by API name, outputs by role,
lane, planner, link, kept runs, code view) and `declare` wires *how*, the same way for every tab.

Written by hand, one endpoint takes about six places in its tab (the `.click` with its
`api_name`, `@user_errors`, `clear_on_error`, the notice's `lifecycle.after` pair, `links.register`,
`runs.track`, `code_view.attach`, `planned`), each a chance to forget one. Declared:

    declare(Endpoint(
        "tokenize", run, {"text": text, "special": special}, outputs, trigger=go, also=[text.submit],
        errors=box, notice=Notice(notice, [out_json], [notice_md]), result=out_json, code=code,
        link=Link("tokenizers", bar), runs=Runs(kept, [enc_md, dec_md])))

wires, in this order (the order the life cycle folds them in): the click (public under `name`) and each
`also` listener (private); the handler under its request's budget with a LabError shown in plain words
(`user_errors`) and its planner (`planned`); on failure the outputs blanked and the message in `errors`;
the notice written after success and blanked after failure; the tab's link; the kept runs; the code view.
`api_name`s and link parameter names are a contract: they stay as they were.

The handler stays a plain function: a test may call it directly (a LabError then reaches the test as
it is), or call `served(fn)` for what the page calls (gr.Error, budget and all)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import gradio as gr

from backend.runtime.contract import Contract
from components.shell import code_view, door, lifecycle, links, runs
from components.shell.cancel import user_errors
from components.shell.errors import clear_on_error
from components.shell.plans import planned

__all__ = ["After", "Code", "Endpoint", "Link", "Notice", "Runs", "declare", "served"]


@dataclass
class Notice:
    """A line written after success from `inputs` (usually the JSON result) into `outputs`, blanked after
    a failure (nothing of the run before stays beside an error)."""
    fn: Callable
    inputs: list
    outputs: list


@dataclass
class After:
    """Any other part run after the event ends in `outcome` ("success" or "failure")."""
    outcome: str
    fn: Callable
    inputs: list | None = None
    outputs: list | None = None


@dataclass
class Link:
    """The tab's link (`links.register`): `key` (?tab=key), its copy-link `bar` (from `links.bar`),
    `params` by their URL names (default: the endpoint's inputs), `run` (the button a link presses, for
    tabs cheap enough to run on open), a sub-tab's `parent` and `subtabs`, and the `results` blanked when
    a link puts new inputs in the tab (with them, the endpoint's code view: its snippet was written from them)."""
    key: str
    bar: Any = None
    params: dict | None = None
    run: Any = None
    parent: str | None = None
    subtabs: Any = None
    results: list = field(default_factory=list)


@dataclass
class Runs:
    """Keep each successful run in `panel` (from `runs.panel`): `parts` (default: the event's readable
    outputs) and `title(values by link name)` (default: the inputs that differ from their defaults)."""
    panel: Any
    parts: list | None = None
    title: Callable | None = None


@dataclass
class Code:
    """A code view (`view`, from `code_view.view`) whose snippet is not simply the endpoint's own: a private
    event whose API twin is declared apart (a stream; /name keeps the one-shot result for scripts). `name`: the
    endpoint the snippet calls (default: the endpoint's name); `inputs`: what the snippet and its notebook are
    written from (default: the endpoint's inputs); `trigger`: what blanks it in the browser as a run starts,
    when not the endpoint's trigger (a handler chained by `.then` after a page-only step: the button itself)."""
    view: code_view.CodeView
    name: str | None = None
    inputs: dict | None = None
    trigger: Any = None


@dataclass
class Endpoint:
    """One endpoint of a tab. `name`: its api_name (None: the page's own, private event); `inputs`: API
    argument name -> component, in the handler's order (the names the code view's client call uses);
    `trigger`: the button whose click runs it (None: an API-only endpoint, `gr.api`); `also`: more
    listeners (`text.submit`) that run it privately; `lane`: its lane's concurrency (SHORT_LANE...);
    `options`: any other event argument (show_progress_on...); `errors`: the tab's error box (`cleared`:
    what a failure blanks, default all outputs; [] blanks nothing, e.g. a stream a Stop must not erase)."""
    name: str | None
    fn: Callable
    inputs: dict
    outputs: list
    trigger: Any = None
    also: list = field(default_factory=list)
    lane: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    errors: gr.Markdown | None = None
    cleared: list | None = None
    planner: Callable | None = None
    shell_slot: bool = False
    notice: Notice | None = None
    after: list = field(default_factory=list)
    link: Link | None = None
    runs: Runs | None = None
    code: code_view.CodeView | Code | None = None
    result: Any = None  # the JSON output the code view writes its snippet from
    wrap: bool = True  # False: the handler handles its own errors and budget (a stream that yields them)
    contract: Contract | None = None  # ranges and cost, checked at the queue's door; required of a public endpoint


_SERVED: dict = {}


def served(fn: Callable, planner: Callable | None = None, shell_slot: bool = False) -> Callable:
    """`fn` as the page calls it: under its request's budget, a LabError as a readable gr.Error, with its
    planner declared. One wrapper per handler, however many endpoints or tests ask for it."""
    key = (fn, planner, shell_slot)
    if key not in _SERVED:
        wrapped = user_errors(fn)
        if planner is not None:
            planned(wrapped, planner, shell_slot=shell_slot)
        _SERVED[key] = wrapped
    return _SERVED[key]


def _listeners(ep: Endpoint) -> list:
    """(listen, public) for each way the endpoint runs: the trigger's click first, then `also`."""
    first = [] if ep.trigger is None else [(ep.trigger.click if hasattr(ep.trigger, "click") else ep.trigger,
                                            ep.trigger)]
    return first + [(listen, listen) for listen in ep.also]


def declare(ep: Endpoint) -> list:
    """Wire `ep` (see the module's docstring) -> its events, the trigger's first (a tab may still chain
    Gradio's own `.success`/`.then` on them, or cancel them from a Stop button)."""
    fn = served(ep.fn, ep.planner, ep.shell_slot) if ep.wrap else ep.fn
    inputs = list(ep.inputs.values())
    if ep.name and ep.contract is None:
        raise TypeError(f"/{ep.name} declares no contract: give its Endpoint contract=Contract(ranges, cost) "
                        "(backend/runtime/contract.py), so the door can check it and the contract suite can test it.")
    if ep.contract is not None:
        names = list(ep.inputs) if ep.trigger is not None else door.api_parameters(ep.fn)
        unknown = set(ep.contract.ranges) - set(names)
        missing = set(names) - set(ep.contract.ranges)
        if unknown or missing:
            raise TypeError(f"/{ep.name or ep.fn.__name__}'s contract does not match its arguments: "
                            f"{sorted(missing)} without a range, {sorted(unknown)} not an argument.")
        if ep.name or ep.errors is not None:  # a private stream that shows its own errors keeps its own words:
            door.attach(fn, ep.contract, names)  # a refusal at the door would only raise a toast over the old text
    if ep.name:  # where a script finds its JSON (the code view's client cell prints it)
        code_view.api_declared(ep.name, ep.outputs if ep.trigger is not None else [], ep.result)
    if ep.trigger is None:  # an API-only endpoint: no component runs it
        gr.api(fn, api_name=ep.name, **ep.lane, **ep.options)
        return []
    events, triggers = [], []
    for i, (listen, trigger) in enumerate(_listeners(ep)):
        visibility = {"api_name": ep.name} if i == 0 and ep.name else {"api_visibility": "private"}
        events.append(listen(fn, inputs, ep.outputs, **visibility, **ep.lane, **ep.options))
        triggers.append(trigger)
    for ev in events:
        _life_cycle(ep, ev)
    if ep.link is not None:
        _link(ep, events)
    for ev in events if ep.runs is not None else ():
        runs.track(ep.runs.panel, ev, ep.runs.parts, title=ep.runs.title)
    if ep.code is not None:
        code = ep.code if isinstance(ep.code, Code) else Code(ep.code)
        triggers[0] = triggers[0] if code.trigger is None else code.trigger
        for ev, trigger in zip(events, triggers):
            inputs = ep.inputs if code.inputs is None else code.inputs
            code_view.attach(code.view, ev, code.name or ep.name or "", inputs, ep.result, trigger=trigger)
    return events


def _blank(n: int) -> Callable:
    def blank():
        return "" if n == 1 else tuple("" for _ in range(n))
    return blank


def _life_cycle(ep: Endpoint, ev) -> None:
    if ep.errors is not None:
        clear_on_error(ev, list(ep.outputs if ep.cleared is None else ep.cleared), ep.errors)
    if ep.notice is not None:
        lifecycle.after(ev, "success", ep.notice.fn, ep.notice.inputs, ep.notice.outputs)
        lifecycle.after(ev, "failure", _blank(len(ep.notice.outputs)), None, ep.notice.outputs)
    for part in ep.after:
        lifecycle.after(ev, part.outcome, part.fn, part.inputs, part.outputs)


def _link(ep: Endpoint, events: list) -> None:
    spec = ep.link
    params = spec.params if spec.params is not None else ep.inputs
    results = list(spec.results)
    if results and ep.code is not None:  # a link that blanks the run's results blanks the code written from them
        view = ep.code.view if isinstance(ep.code, Code) else ep.code
        results += [o for o in view.outputs if not any(o is r for r in results)]
    links.register(spec.key, params, events, spec.bar, run=spec.run, parent=spec.parent, subtabs=spec.subtabs,
                   results=results)


def declare_link(spec: Link, events: list, more: list = ()) -> None:
    """A tab's link declared apart from its endpoints, once every setting it carries is built (the Train tab: one
    link for both tasks, whose NER settings are built after the classifier's /train is declared). `events` (from
    `declare`) write it into `spec.bar` after success and blank it after a failure, as an Endpoint's `link` does;
    each (event, bar) of `more` writes the same link into a bar of its own after success (a second task's column,
    whose bar shows while the first's is hidden)."""
    links.register(spec.key, spec.params or {}, events, spec.bar, run=spec.run, parent=spec.parent,
                   subtabs=spec.subtabs, results=spec.results)
    params = links.registered()[spec.key].params

    def written(*values):
        query, omitted = links.encode(spec.key, params, list(values))
        return links.bar_html(query, omitted)

    written.__name__ = f"link_{spec.key}_more"
    for event, bar in more:
        lifecycle.after(event, "success", written, [p.component for p in params], [bar])
