"""The Start tab: the book's chapters as a map, a route for a first hour, and "Try" buttons.

Each button opens its tab with an example loaded by the same path as a shared link
(`links.apply`), so app.py wires the buttons once every tab (and its inputs) exists.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from components.shell import challenges, course
from components.shell import links
from components.shell.endpoint import Endpoint, declare
from components.start import handlers, route

INTRO = (
    "### Start here\nThis app lets you run and *see* what " + course.BOOK + " teaches, on real models. "
    "Each chapter below says what it teaches, which tab shows it, and one thing to try: the button opens "
    "the tab with an example loaded. Every tab links its chapter's companion notebook "
    f"([all notebooks]({course.NOTEBOOKS_REPO})). After a run, the address bar holds a link that reopens "
    "the same result: copy it to share or bookmark what you see."
)


ROUTE_INTRO = (
    "#### A first hour, guided\nSix steps, each building on the last. For each: read the question and "
    "**predict** an answer, then **reveal** what to look for (written from a run of the step's example on this "
    "server), then **open** the tab with that example loaded and find it there. Tick a step when it is done: the "
    "ticks stay in this browser.")
# A step's "done" box: kept in this browser's localStorage, never sent to the server
DONE_JS = (Path(__file__).resolve().parent / "done.js").read_text()
# Chapter 3's encoder and decoder as an SVG whose parts open the tab (and layer / head) that computes them: each
# part is a link marked `tlab-open-here`, opened in this page by components/shell/runs.py's tools
HERE = Path(__file__).resolve().parent
ARCH_HTML, ARCH_CSS = ((HERE / name).read_text() for name in ("transformer.html", "transformer.css"))


def _route(titles: dict[str, str]) -> list[tuple]:
    """The guided steps; returns (Open button, step, the card's findings, the card) for `wire`."""
    opens = []
    gr.Markdown(ROUTE_INTRO, elem_id="start-route")
    for i, (step, (_, what)) in enumerate(zip(route.STEPS, course.FIRST_HOUR), 1):
        title = titles.get(step.key, step.key)
        with gr.Group(elem_id=f"start-step-{i}", elem_classes=["start-step"]):
            gr.Markdown(f"**{i}. {title}**: {what}  \n*Predict first:* {step.predict}",
                        elem_id=f"start-step-{i}-text")
            with gr.Row():
                show = gr.Button("Reveal what to look for", size="sm", scale=0, min_width=200,
                                 elem_id=f"start-reveal-{i}")
                opener = gr.Button(f"Open {title} with this example", size="sm", scale=0, min_width=200,
                                   elem_id=f"start-open-{i}")
                gr.HTML(f"<label class='tlab-start-done'><input type='checkbox' data-step='{step.key}'> done</label>",
                        js_on_load=DONE_JS, elem_id=f"start-done-{i}", padding=False)
            card = gr.Markdown(elem_id=f"start-card-{i}")
            found = gr.State({})
        fn, lane = handlers.reveal(step.key)
        declare(Endpoint(None, fn, {}, [card, found], trigger=show, lane=lane))
        opens.append((opener, step, found, card))
    return opens


def _architecture() -> None:
    """The transformer picture: each part a link (?tab=...) opened in place; the caption defines each part."""
    gr.Markdown("#### The transformer, part by part (the book's chapter 3)", elem_id="start-arch-head")
    gr.HTML(ARCH_HTML, css_template=ARCH_CSS, elem_id="start-arch")


def _chapter_md(c: course.Chapter, titles: dict[str, str]) -> str:
    tabs = ", ".join(f"**{titles.get(t, t)}**" for t in c.tabs) or "no tab yet"
    text = (f"**{c.number}. {c.title}** · [notebook]({c.notebook_url})  \n{c.teaches}  \n"
            f"Tab: {tabs}")
    if c.gap:
        text += f"  \n*{c.gap}*"
    return text


def build(titles: dict[str, str]) -> list[tuple]:
    """The page; returns each Try button with the query it opens, and each first-hour step's Open button
    (wired by `wire`)."""
    buttons = []
    gr.Markdown(INTRO, elem_id="start-intro")
    buttons += _route(titles)
    _architecture()
    gr.Markdown("#### The chapters")
    for c in course.CHAPTERS:
        with gr.Row(equal_height=False, elem_classes=["start-chapter"], elem_id=f"start-ch{c.number}"):
            gr.Markdown(_chapter_md(c, titles), elem_classes=["start-chapter-text"])
            if c.try_query:
                btn = gr.Button(f"Try: {c.try_label}", size="sm", scale=0, min_width=200,
                                elem_id=f"start-try-{c.number}")
                buttons.append((btn, c.try_query))
        challenges.section(f"start-ch{c.number}", challenges.for_chapter(c.number),
                           f"Chapter {c.number}'s challenges")
    return buttons


def wire(buttons: list[tuple], tabs) -> None:
    """Each button applies its query like a link; call after every tab registered its inputs. A first-hour
    step's button (button, step, its card's findings) opens its tab at what the card found."""
    for item in buttons:
        if len(item) == 4:
            opener, step, found, card = item
            out, cut = links.narrowed(tabs, route.open_query(step, {}))

            def go(extra, step=step, cut=cut):
                return cut(links.apply(route.open_query(step, extra if isinstance(extra, dict) else {}),
                                       note="Opened from the Start page's first hour."))

            go.__name__ = f"start_step_{step.key}"
            if step.key in route.FINDS:  # the card's findings first (a reloaded page has none), then the tab
                fill, lane = handlers.findings(step.key)
                filled, = declare(Endpoint(None, fill, {"found": found}, [card, found], trigger=opener, lane=lane))
                filled.success(go, [found], out, **links.PAGE_ONLY)
            else:
                opener.click(go, [found], out, **links.PAGE_ONLY)
            continue
        btn, query = item
        out, cut = links.narrowed(tabs, query)

        def fn(query=dict(query), cut=cut):
            return cut(links.apply(query, note="Opened from the Start page."))

        fn.__name__ = f"start_{query.get('tab', 'tab')}"
        btn.click(fn, None, out, **links.PAGE_ONLY)
