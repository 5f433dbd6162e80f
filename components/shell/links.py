"""Links that restore a result: a tab's inputs, written into the page's query string.

A tab calls `register(key, {name: component}, events=[...], run=button)` where its "copy link"
bar belongs. After each of those events succeeds, the bar shows the link and its script writes
it into the address bar (history.replaceState; on a Space also the parent page, by the message
Spaces listens for). On page load (`restore`) and from the Start page (`apply`) the same
parameters set the tab's inputs again; a tab registered with a `run` button also runs on open (the
cheap runs: tokenize, attention, anatomy).

The query string is a stranger's text: unknown keys are dropped, numbers are clipped to the
component's range, choices must be one of the component's, text is capped, and nothing from it
is ever rendered except escaped (the bar's link is rebuilt from the validated values).
Values are kept in the URL (not Gradio's per-session deep links, which session_memory disables).
"""

from __future__ import annotations

import html
import json
import logging
import math
from pathlib import Path
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qsl, urlencode

import gradio as gr

from components.shell import gradio_patches, lifecycle

ASSETS = Path(__file__).resolve().parent / "assets"
_log = logging.getLogger("tlab.links")
MAX_TEXT = 1500  # characters of one text input that a link carries; a longer one is left out
NUMBER_BOUND = 10_000  # a gr.Number without bounds: a link's value is clipped to +-this
TAB_KEY = "tab"
OMITTED_KEY = "omitted"


@dataclass
class Param:
    name: str
    component: object
    kind: str  # text | int | float | bool | choice | multi (several of the choices, comma-separated)
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()

    def parse(self, raw: str):
        """The value a raw query-string text stands for, within this input's range, or None."""
        if not isinstance(raw, str):
            return None
        if self.kind == "text":
            return raw[:MAX_TEXT]
        if self.kind == "bool":
            low = raw.strip().lower()
            return True if low in ("1", "true", "yes", "on") else False if low in ("0", "false", "no", "off") else None
        if self.kind == "choice":
            return raw if raw in self.choices else None
        if self.kind == "multi":
            picked = [c for c in self.choices if c in raw[:2000].split(",")]  # the component's order, no repeats
            return picked if picked or not raw.strip() else None
        try:
            number = float(raw[:40])
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        number = min(max(number, self.lo), self.hi)
        return int(round(number)) if self.kind == "int" else number

    def render(self, value) -> str | None:
        """The query-string text of a value (None: leave it out)."""
        if value is None:
            return None
        if self.kind == "bool":
            return "1" if value else "0"
        if self.kind == "multi":
            return ",".join(str(v) for v in value if str(v) in self.choices) if isinstance(value, (list, tuple)) else None
        if self.kind == "choice" and str(value) not in self.choices:
            return None  # a choice a link may not carry (an upload): left out
        if self.kind in ("int", "float"):
            try:
                number = float(value)
            except (TypeError, ValueError):
                return None
            return str(int(number)) if self.kind == "int" or number.is_integer() else f"{number:g}"
        return str(value)


@dataclass
class TabLink:
    key: str  # the tab's id (gr.Tab(id=...)) and its name in the URL
    params: list[Param]
    bar: object | None = None  # the "copy link" gr.HTML
    run_id: str | None = None  # elem_id of the button a cheap tab presses on open
    parent: str | None = None  # a sub-tab's main tab (the page's gr.Tabs selects it; `key` selects the sub-tab)
    subtabs: object | None = None  # the gr.Tabs that holds this sub-tab (gr.Tab(id=key) inside it)
    results: list = field(default_factory=list)  # what a run shows: blanked when a link or hand-off refills the inputs


_REGISTRY: dict[str, TabLink] = {}


def reset() -> None:
    """Forget every registration (a new page is being built)."""
    _REGISTRY.clear()
    _HANDOFFS.clear()
    _MODEL_BOXES.clear()  # a box of an earlier page is no output of this one
    lifecycle.reset()  # jobs waiting for an earlier page's wire


def registered() -> dict[str, TabLink]:
    return dict(_REGISTRY)


def param_for(name: str, component) -> Param:
    """What a link may hold for this component, read from its own range and choices."""
    if isinstance(component, gr.Checkbox):
        return Param(name, component, "bool")
    if isinstance(component, gr.CheckboxGroup):
        values = tuple(str(c[1] if isinstance(c, (tuple, list)) else c) for c in component.choices or ())
        return Param(name, component, "multi", choices=values)
    if isinstance(component, (gr.Radio, gr.Dropdown)):
        values = tuple(str(c[1] if isinstance(c, (tuple, list)) else c) for c in component.choices or ())
        return Param(name, component, "choice", choices=values)
    if isinstance(component, gr.Slider):
        step = float(component.step or 1)
        kind = "int" if step.is_integer() and float(component.minimum).is_integer() else "float"
        return Param(name, component, kind, float(component.minimum), float(component.maximum))
    if isinstance(component, gr.Number):
        lo = component.minimum if component.minimum is not None else -NUMBER_BOUND
        hi = component.maximum if component.maximum is not None else NUMBER_BOUND
        return Param(name, component, "int" if component.precision == 0 else "float", float(lo), float(hi))
    return Param(name, component, "text")


def _param(name: str, spec) -> Param:
    """A component, or (component, lo, hi) where its own range is narrower than what a link may
    hold (a slider whose maximum follows the model), or (component, choices) for the only choices
    a link may carry (not "upload": a link never carries a file)."""
    if isinstance(spec, tuple) and len(spec) == 2:
        component, allowed = spec
        p = param_for(name, component)
        p.choices = tuple(c for c in p.choices if c in allowed)
        return p
    if isinstance(spec, tuple):
        component, lo, hi = spec
        p = param_for(name, component)
        p.lo, p.hi = float(lo), float(hi)
        return p
    return param_for(name, spec)


def _set(p: Param, value):
    """The update that puts a link's value into its input (a slider's maximum widened to hold it)."""
    hi = getattr(p.component, "maximum", None)
    if isinstance(p.component, gr.Slider) and hi is not None and value > hi:
        return gr.update(value=value, maximum=value)
    return gr.update(value=value)


# ---------------------------------------------------------------- plain encoding (unit-tested)
def encode(key: str, params: list[Param], values: list) -> tuple[str, list[str]]:
    """(query string, names left out because too long) for these input values."""
    pairs = [(TAB_KEY, key)]
    omitted = []
    for p, value in zip(params, values):
        if p.kind == "text" and isinstance(value, str) and len(value) > MAX_TEXT:
            omitted.append(p.name)
            continue
        text = p.render(value)
        if text is not None:
            pairs.append((p.name, text))
    if omitted:
        pairs.append((OMITTED_KEY, ",".join(omitted)))
    return urlencode(pairs), omitted


def decode(query: dict) -> tuple[str | None, dict, list[str]]:
    """(tab key, {param name: value}, names the link left out) from a stranger's query params."""
    key = query.get(TAB_KEY)
    link = _REGISTRY.get(key) if isinstance(key, str) else None
    if link is None:
        return (key if isinstance(key, str) and key in _known_tabs() else None), {}, []
    values = {}
    for p in link.params:
        if p.name in query:
            value = p.parse(query[p.name])
            if value is not None:
                values[p.name] = value
    raw = query.get(OMITTED_KEY)
    omitted = [p.name for p in link.params if isinstance(raw, str) and p.name in raw.split(",")]
    return key, values, omitted


_TABS: set[str] = set()


def known_tabs(keys) -> None:
    """The page's tab ids (a link may open a tab that registered no inputs)."""
    _TABS.clear()
    _TABS.update(keys)


def _known_tabs() -> set[str]:
    return _TABS | set(_REGISTRY)


def bar_html(query: str, omitted: list[str], autorun: bool = False, note: str = "") -> str:
    """The bar: the link, a copy button, and what the link leaves out. Everything escaped."""
    if not query:
        return ""
    said = ""
    if omitted:
        said = (f" <span class='tlab-link-note'>Left out of the link (longer than {MAX_TEXT} characters): "
                f"{html.escape(', '.join(omitted))}.</span>")
    if note:
        said += f" <span class='tlab-link-note'>{html.escape(note)}</span>"
    run = " data-autorun='1'" if autorun else ""
    return (f"<div class='tlab-link-row'{run}><a class='tlab-link-a' href='?{html.escape(query, quote=True)}'>"
            "Link to this result</a> <button type='button' class='tlab-copy'>Copy link</button>" + said + "</div>")


# ---------------------------------------------------------------- the page
# Runs once per bar: writes the link into the address bar whenever the bar changes, copies it on
# the button, and presses the tab's run button when the bar asks (a link opened on a cheap tab).
BAR_JS = (ASSETS / "link_bar.js").read_text()
# The address bar, written from one place: a link's query (or a tab's own `?tab=`), the figures'
# clip paths re-pointed, and on a Space the parent page told. Placed once per page (app.py).
ADDRESS_JS = (ASSETS / "address.js").read_text()
# When the learner opens a tab, the address names it: the link of the result it shows (its visible
# link bar), else the tab alone.
FOLLOW_JS = (ASSETS / "follow_tab.js").read_text()
# Run once the page has applied its own address: the address follower (FOLLOW_JS) writes nothing before,
# and the browser tests wait for it before they click a tab (app.py; a tab served alone: tests/tab_app.py).
READY_JS = "() => { window.__tlabReady = true; }"
PAGE_ONLY = lifecycle.PAGE_ONLY  # an event of the page alone (see there)
QUERY_MAX = 4 * MAX_TEXT + 2000  # a link with every text input at its cap, and the rest
BAR_CSS = (ASSETS / "link_bar.css").read_text()


def bar(key: str, run=None):
    """The tab's link bar, placed where it is called (near the result). `run`: the button that a
    link opened on this tab presses (only for cheap runs: tokenize, attention, anatomy)."""
    run_id = getattr(run, "elem_id", None) or ""
    return gr.HTML("", js_on_load=BAR_JS.replace("__RUN_ID__", json.dumps(run_id)).replace("__KEY__", json.dumps(key)), css_template=BAR_CSS,
                   elem_id=f"{key}-link", elem_classes=["tlab-link"])


def address_tools() -> gr.HTML:
    """Place once per page: the one function that writes the address bar (`ADDRESS_JS`)."""
    return gr.HTML("", js_on_load=ADDRESS_JS, elem_id="tlab-address", visible="hidden")


def follow_tab(tab, key: str, elem_id: str) -> None:
    """When the learner selects `tab` (element `elem_id`), the address names it (`FOLLOW_JS`)."""
    query = "?" + urlencode({TAB_KEY: key})
    tab.select(None, None, None, js=FOLLOW_JS.replace("__BOX__", json.dumps(elem_id)).replace(
        "__QUERY__", json.dumps(query)), **PAGE_ONLY)


def register(key: str, inputs: dict, events=(), link_bar=None, run=None, parent: str | None = None,
             subtabs=None, results=()) -> None:
    """Give a tab links: `inputs` by their URL names (keep a name once links are out), the `events`
    after whose success the link is written into `link_bar` (from `bar`), `run` as given to `bar`.
    A sub-tab (Pipelines' tasks) names its main tab as `parent` and the gr.Tabs it sits in as
    `subtabs`; its own gr.Tab has id=key. `results`: the outputs of the tab's run, blanked when a link
    or a hand-off puts new inputs in the tab (nothing of an earlier run stays beside them)."""
    params = [_param(name, spec) for name, spec in inputs.items()]
    _REGISTRY[key] = TabLink(key, params, link_bar, getattr(run, "elem_id", None), parent=parent, subtabs=subtabs,
                             results=list(results))

    def written(*values):
        query, omitted = encode(key, params, list(values))
        return bar_html(query, omitted)

    written.__name__ = f"link_{key}"
    def blank():
        return ""

    for event in events if link_bar is not None else ():
        lifecycle.after(event, "success", written, [p.component for p in params], [link_bar])
        lifecycle.after(event, "failure", blank, None, [link_bar])  # a failed run leaves no link to what it replaced


def _subtabs() -> list:
    """The sub-tab groups (each once), in registration order."""
    seen: list = []
    for link in _REGISTRY.values():
        if link.subtabs is not None and all(link.subtabs is not s for s in seen):
            seen.append(link.subtabs)
    return seen


def model_box(key: str, component) -> None:
    """A tab's model box: never part of a link, but a hand-off may fill it (a model trained in
    this session, offered under a name only this page holds)."""
    _MODEL_BOXES[key] = component


_MODEL_BOXES: dict[str, object] = {}


def has_model_box(key: str) -> bool:
    return key in _MODEL_BOXES


def outputs(tabs) -> list:
    """Every component a restore may set, in the order `updates` returns them."""
    out = [tabs, *_subtabs()]
    for link in _REGISTRY.values():
        out += [p.component for p in link.params] + ([link.bar] if link.bar is not None else []) + link.results
    return out + list(_MODEL_BOXES.values())


def _owners() -> list[str | None]:
    """Whose each of `outputs(...)` is, in order: a link's key, or None for the tab groups."""
    own: list[str | None] = [None] * (1 + len(_subtabs()))
    for k, link in _REGISTRY.items():
        own += [k] * (len(link.params) + (link.bar is not None) + len(link.results))
    return own + list(_MODEL_BOXES)


def narrowed(tabs, query: dict) -> tuple[list, Callable[[list], list]]:
    """(the outputs an open of `query`'s tab can set, the function cutting `updates(...)` to them), for a
    button whose target tab is fixed (a hand-off, a Start step): ~10 outputs in the page's config instead
    of the ~150 a restore may set, for each of ~40 buttons. (The per-run cost such an open once had is
    gone with `PAGE_ONLY`'s empty progress targets; `updates` still builds every tab's, then this cuts.)"""
    key = decode(query)[0]
    keep = [i for i, owner in enumerate(_owners()) if owner is None or owner == key]
    kept, every = set(keep), outputs(tabs)

    def cut(ups: list) -> list:
        dropped = [u for i, u in enumerate(ups) if i not in kept and u != gr.skip()]
        if dropped:  # the open set another tab's input: a bug here, said, and the open still applies
            _log.error("an open of %r set outputs outside its tab: %r", key, dropped[:3])
        return [ups[i] for i in keep]

    return [every[i] for i in keep], cut


def updates(key: str | None, values: dict, omitted: list[str], autorun: bool = True, note: str = "",
            model: str | None = None) -> list:
    """The updates for `outputs(...)`: the tab selected, its inputs set, its bar showing the link
    (and, from a hand-off, its model box set to `model`)."""
    this = _REGISTRY.get(key) if key else None
    main = (this.parent if this is not None and this.parent else key)
    out = [gr.update(selected=main) if main else gr.skip()]
    out += [gr.update(selected=key) if this is not None and this.subtabs is group else gr.skip()
            for group in _subtabs()]
    for k, link in _REGISTRY.items():
        mine = k == key
        out += [_set(p, values[p.name]) if mine and p.name in values else gr.skip() for p in link.params]
        if link.bar is not None:
            if mine and values:
                query, _ = encode(key, link.params, [values.get(p.name) for p in link.params])
                if omitted:
                    query += "&" + urlencode({OMITTED_KEY: ",".join(omitted)})
                out.append(bar_html(query, omitted, autorun=autorun and link.run_id is not None, note=note))
            else:
                out.append(gr.skip())
        out += [None if mine and values else gr.skip() for _ in link.results]
    return out + [gr.update(value=model) if model is not None and k == key else gr.skip() for k in _MODEL_BOXES]


def parsed(query) -> dict:
    """A query string sent by the page (its address, a kept run's link) as the server reads one (blank
    values kept, the last of a repeated key wins), cut at QUERY_MAX; anything but text reads as none."""
    text = query[:QUERY_MAX] if isinstance(query, str) else ""
    return dict(parse_qsl(text.lstrip("?"), keep_blank_values=True))


def apply(query: dict, note: str = ""):
    """A Start-page button: the same path as a link, from plain data."""
    key, values, omitted = decode(query)
    return updates(key, values, omitted, note=note)


# ---------------------------------------------------------------- hand-offs between tabs
@dataclass
class Handoff:
    button: object
    source: object  # the component whose value is handed on
    query: dict  # the target tab and any fixed inputs, e.g. {"tab": "attention", "role": "encoder"}
    param: str  # the target input that receives the source's value
    model: object = None  # a component holding a model-box name for the target (see `model_box`)


_HANDOFFS: list[Handoff] = []


def handoff(label: str, source, tab: str, param: str, model=None, **fixed) -> gr.Button:
    """A small button, placed where it is called, that opens `tab` with `source`'s value as its
    `param` input (a sentence tried in Pipelines, seen in Attention). Wired by `wire_handoffs`
    once every tab exists. The value is handed over whole, never cut to a link's length."""
    button = gr.Button(label, size="sm", variant="secondary", scale=0, min_width=160,
                       elem_id=f"handoff-{tab}-{param}-{len(_HANDOFFS)}", elem_classes=["tlab-handoff"])
    _HANDOFFS.append(Handoff(button, source, {TAB_KEY: tab, **fixed}, param, model))
    return button


def handed(query: dict, param: str, value, model: str | None = None):
    """The updates a hand-off makes: the target's fixed inputs from `query`, then the value (and
    the target's model box, when the hand-off carries a model and the target has a box)."""
    key, values, _ = decode(query)
    link = _REGISTRY.get(key) if key else None
    if link is not None and any(p.name == param for p in link.params) and isinstance(value, str):
        values[param] = value
    model = model if isinstance(model, str) and model and key in _MODEL_BOXES else None
    return updates(key, values, [], note="Opened from another tab." + (" The model box holds the model it handed "
                                                                         "over." if model else ""), model=model)


def wire_handoffs(tabs) -> None:
    """Connect every hand-off button; call after every tab registered its inputs."""
    for h in _HANDOFFS:
        out, cut = narrowed(tabs, h.query)

        def go(value, model=None, query=dict(h.query), param=h.param, cut=cut):
            return cut(handed(query, param, value, model))

        go.__name__ = f"handoff_{h.query[TAB_KEY]}"
        h.button.click(go, [h.source] + ([h.model] if h.model is not None else []), out, **PAGE_ONLY)
