"""Queries opened in this page: the page's own address once it has loaded, and a link marked
`tlab-open-here` (a kept run's "Reopen this run", a part of the Start tab's transformer picture).

Each goes into one hidden box (`open_query.js`: the page-load's value for the box; a click, through
`window.__tlabOpenQuery`), whose open is a link's restore (`restore`); a page with no query asks the
server nothing and is ready at once.

The open may set every tab's link inputs (~150 outputs), so it is declared with no progress targets
(`links.PAGE_ONLY`). Gradio's page keeps a loading status for every component that was a progress target
of any event that ran, and re-applies them all on every later status message of any run: this open, as
a default event, made every later run pay for ~150 (the Start picture's 16 parts, each opened once: 53 s
of the page's CPU, 25 s of it in that re-apply; with no targets, 23 s and 8 s). A box and an open per
tab, each listing only its tab's outputs, were tried and measured: the page's config grew by 16
components and 36 events, and every page load took ~0.3 s longer, for no further gain."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from components.shell import links
from components.shell.widgets import Textbox

BOX_ID = "tlab-open"  # the hidden box every query opened in this page goes into
OPEN_JS = (Path(__file__).resolve().parent / "assets" / "open_query.js").read_text()


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


def holders() -> list[tuple[str, object]]:
    """Each tab's hidden holders: a hidden text box that a link sets and a listener copies on (Decoding's
    seed of the run, Why's packed hand-off)."""
    return [(key, p.component) for key, link in links.registered().items() for p in link.params
            if isinstance(p.component, gr.Textbox) and getattr(p.component, "visible", True) == "hidden"]


def emptied(held: list[tuple[str, object]]):
    """The handler that empties the opened tab's holders first: a holder already holding the link's value
    (the last run's seed, reopened) would not change, and its listener would not copy it on."""
    def empty(query):
        tab = links.parsed(query).get(links.TAB_KEY)
        out = ["" if key == tab else gr.skip() for key, _ in held]
        return out if len(out) != 1 else out[0]

    return empty


def wire(demo, tabs) -> None:
    """Place once every tab registered its link (app.py): the one box a query opened in this page goes
    into, its open, and the page-load script that sends the page's own query. The browser tests wait for
    the ready flag (links.READY_JS) before they click a tab; the open sets it when it is done."""
    box = Textbox(value="", visible="hidden", elem_id=BOX_ID, label="link to open in this page")
    held = holders()
    if held:
        opened = box.change(emptied(held), [box], [c for _, c in held], **links.PAGE_ONLY).then(
            restore, [box], links.outputs(tabs), **links.PAGE_ONLY)
    else:
        opened = box.change(restore, [box], links.outputs(tabs), **links.PAGE_ONLY)
    opened.then(None, None, None, js=links.READY_JS, **links.PAGE_ONLY)
    # the page's own query goes into the box as this load's value (Gradio's state, not the page's elements,
    # which may not all be drawn yet when the load runs)
    demo.load(None, None, [box], js=OPEN_JS.replace("__BOX__", json.dumps(BOX_ID)), **links.PAGE_ONLY)
