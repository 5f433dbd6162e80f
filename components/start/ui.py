"""The Start tab: the book's chapters as a map, a route for a first hour, and "Try" buttons.

Each button opens its tab with an example loaded by the same path as a shared link
(`links.apply`), so app.py wires the buttons once every tab (and its inputs) exists.
"""

from __future__ import annotations

import functools

import gradio as gr

from components.shell import course
from components.shell import links

INTRO = (
    "### Start here\nThis app lets you run and *see* what " + course.BOOK + " teaches, on real models. "
    "Each chapter below says what it teaches, which tab shows it, and one thing to try: the button opens "
    "the tab with an example loaded. Every tab links its chapter's companion notebook "
    f"([all notebooks]({course.NOTEBOOKS_REPO})). After a run, the address bar holds a link that reopens "
    "the same result: copy it to share or bookmark what you see."
)


def _route(titles: dict[str, str]) -> str:
    steps = [f"{i}. **{titles.get(tab, tab)}**: {what}" for i, (tab, what) in enumerate(course.FIRST_HOUR, 1)]
    return "#### A first hour\n" + "\n".join(steps)


def _chapter_md(c: course.Chapter, titles: dict[str, str]) -> str:
    tabs = ", ".join(f"**{titles.get(t, t)}**" for t in c.tabs) or "no tab yet"
    text = (f"**{c.number}. {c.title}** · [notebook]({c.notebook_url})  \n{c.teaches}  \n"
            f"Tab: {tabs}")
    if c.gap:
        text += f"  \n*{c.gap}*"
    return text


def build(titles: dict[str, str]) -> list[tuple[gr.Button, dict]]:
    """The page; returns each Try button with the query it opens (wired by `wire`)."""
    buttons = []
    gr.Markdown(INTRO, elem_id="start-intro")
    gr.Markdown(_route(titles), elem_id="start-route")
    gr.Markdown("#### The chapters")
    for c in course.CHAPTERS:
        with gr.Row(equal_height=False, elem_classes=["start-chapter"], elem_id=f"start-ch{c.number}"):
            gr.Markdown(_chapter_md(c, titles), elem_classes=["start-chapter-text"])
            if c.try_query:
                btn = gr.Button(f"Try: {c.try_label}", size="sm", scale=0, min_width=200,
                                elem_id=f"start-try-{c.number}")
                buttons.append((btn, c.try_query))
    return buttons


def wire(buttons: list[tuple[gr.Button, dict]], tabs) -> None:
    """Each button applies its query like a link; call after every tab registered its inputs."""
    out = links.outputs(tabs)
    for btn, query in buttons:
        fn = functools.partial(links.apply, dict(query), note="Opened from the Start page.")
        fn.__name__ = f"start_{query.get('tab', 'tab')}"  # type: ignore[attr-defined]
        btn.click(fn, None, out, api_visibility="private", queue=False, show_progress="hidden")
