"""Queries opened in this page: the page's own address once it has loaded, and a link marked
`tlab-open-here` (a kept run's "Reopen this run", a part of the Start tab's transformer picture).

Each tab has its own hidden box and its own open, listing only that tab's outputs (`links.narrowed`); one
more box opens any other tab (a tab without a link, or a name no tab has). The page puts a query into the
box of the tab it names (`open_query.js`: the page-load's value for that box; a click, through
`window.__tlabOpenQuery`); a page with no query asks the server nothing and is ready at once.

Why one open per tab, and why the page sends its query instead of a load event reading the request's:
Gradio's page, once an event has set a component, re-applies a loading status to that component on every
later status message of any run. An open that may set ~150 components (every tab's link inputs), run on
a page load or a click on the Start picture, made every later run's status messages touch all of them
(the Start picture's 16 parts, each opened once: 53 s of the page's CPU, 25 s of it in that re-apply)."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from components.shell import links
from components.shell.widgets import Textbox

ANY = ""  # the box for a tab without a link of its own, or a name no tab has
OPEN_JS = (Path(__file__).resolve().parent / "assets" / "open_query.js").read_text()


def box_id(key: str) -> str:
    return f"tlab-open-{key}" if key != ANY else "tlab-open-any"


def _note(query: dict) -> str:
    """What the link bar says about an open: a kept run's link (runs.js marks it `reopened`), a part of this
    page (`opened`), or nothing for the page's own address."""
    return ("Reopened from your runs." if "reopened" in query else "Opened from this page." if "opened" in query
            else "")


def restore(query) -> list:
    """A query string the page sent (its address, a kept run's link), validated, as updates for every
    `links.outputs` (nothing when there is none). Read as the server reads an address's query (Starlette:
    blank values kept, the last of a repeated key wins)."""
    query = links.parsed(query)
    key, values, omitted = links.decode(query)
    return links.updates(key, values, omitted, note=_note(query))


def opener(tabs, key: str):
    """(outputs, handler) of the open for `key`'s box: `restore` cut to that tab's outputs. A query naming
    another tab (sent by hand, not by the page) opens nothing; the box for any other tab only selects it."""
    out, cut = links.narrowed(tabs, {links.TAB_KEY: key} if key != ANY else {})

    def open_here(query):
        named = links.decode(links.parsed(query))[0]
        if key == ANY:  # only the tab groups are this box's outputs: the tab is selected, nothing else set
            ups = cut(links.updates(named, {}, []))
        else:
            ups = cut(restore(query)) if named == key else [gr.skip()] * len(out)
        return ups if len(ups) != 1 else ups[0]

    open_here.__name__ = f"open_{(key or 'any').replace('-', '_')}"
    return out, open_here


def holders(key: str) -> list:
    """The tab's hidden holders: a hidden text box that a link sets and a listener copies on (Decoding's
    seed of the run, Why's packed hand-off)."""
    link = links.registered().get(key)
    return [p.component for p in (link.params if link is not None else [])
            if isinstance(p.component, gr.Textbox) and getattr(p.component, "visible", True) == "hidden"]


def _emptied(n: int):
    """Empty the opened tab's holders first: a holder already holding the link's value (the last run's seed,
    reopened) would not change, and its listener would not copy it on."""
    def empty(query):
        return [""] * n if n != 1 else ""

    return empty


def wire(demo, tabs) -> None:
    """Place once every tab registered its link (app.py): a box and an open per tab, and the page-load script
    that sends the page's own query. The browser tests wait for the ready flag (links.READY_JS) before they
    click a tab; every open sets it when it is done."""
    keys = [*links.registered(), ANY]
    boxes = []
    for key in keys:
        box = Textbox(value="", visible="hidden", elem_id=box_id(key), label=f"link to open: {key or 'any tab'}")
        out, fn = opener(tabs, key)
        held = holders(key) if key != ANY else []
        if held:
            opened = box.change(_emptied(len(held)), [box], held, **links.PAGE_ONLY).then(fn, [box], out,
                                                                                         **links.PAGE_ONLY)
        else:
            opened = box.change(fn, [box], out, **links.PAGE_ONLY)
        opened.then(None, None, None, js=links.READY_JS, **links.PAGE_ONLY)
        boxes.append(box)
    # the page's own query goes into its box as this load's value (Gradio's state, not the page's elements,
    # which may not all be drawn yet when the load runs)
    demo.load(None, None, boxes, js=OPEN_JS.replace("__BOXES__", json.dumps({k: box_id(k) for k in keys})),
              **links.PAGE_ONLY)
