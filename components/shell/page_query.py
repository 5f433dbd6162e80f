"""The page's own address, applied once it has loaded: a page opened with a query string restores its
tab (its inputs and link bar), then says it is ready; a page with none is ready at once and asks the
server nothing.

Why the page sends its query instead of a load event reading the request's: Gradio's page, once an event
has set a component, re-applies a loading status to that component on every later status message of any
run. A restore that may set ~150 components (every tab's link inputs), run on every page load, made every
later run's status messages touch all of them: ~0.5 s of the page's CPU per run on a 2-core box."""

from __future__ import annotations

import gradio as gr

from components.shell import links

QUERY_JS = "() => { const q = location.search; if (q.length < 2) window.__tlabReady = true; return q; }"


def restore(query: str):
    """The page's own query string (QUERY_JS sends it), validated, as updates for `links.outputs`
    (nothing when there is none). Read as the server reads an address's query (Starlette: blank values
    kept, the last of a repeated key wins)."""
    key, values, omitted = links.decode(links.parsed(query))
    return links.updates(key, values, omitted)


def wire(demo, tabs) -> None:
    """Place once every tab registered its link (app.py); the browser tests wait for the ready flag
    (links.READY_JS) before they click a tab."""
    box = gr.Textbox(value="", visible="hidden", elem_id="tlab-page-query", label="this page's query string")
    hidden = dict(api_visibility="private", queue=False, show_progress="hidden")
    demo.load(None, None, [box], js=QUERY_JS, **hidden)
    box.change(restore, [box], links.outputs(tabs), **hidden).then(None, None, None, js=links.READY_JS, **hidden)
