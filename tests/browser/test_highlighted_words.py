"""Highlighted text in prose (QA's "Answer in the context", NER's entities): a word is never broken in the
middle at a line's end (Gradio's HighlightedText breaks anywhere: `word-break: break-all`, so a 390-px phone
read "Ke / ssling", "be / st-known"). Measured: each word of the drawn text fits in one line box."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from components.pipelines.plots import answer_highlight
from tests.helpers.browser import shot
from tests.helpers.browser import new_page
from tests.helpers.tab_app import served_tab

CONTEXT = ("The best-known account of the Kessling expedition was written by Margarethe Kessling herself, "
           "who led the survey of the upper valley in 1911 with eleven companions, mapping glaciers, "
           "passes and settlements that no published atlas had recorded before her extraordinary journey.")


@pytest.fixture(scope="module")
def highlight_url():
    import gradio as gr

    from components.pipelines import ui as pipelines
    from components.shell import figure_tools

    start = CONTEXT.index("Margarethe Kessling")
    value = answer_highlight({"context": CONTEXT, "answers": [
        {"start": start, "end": start + len("Margarethe Kessling"), "score": 0.91, "answer": "Margarethe Kessling"}]})

    def build():
        figure_tools()  # the page's shared figure and text styles, as app.py places them
        gr.HighlightedText(value=value, label="Answer in the context", show_legend=True, elem_id="pl-qa-highlight",
                           elem_classes=pipelines.PROSE_HIGHLIGHT)

    with served_tab(build, themed=True) as url:
        yield url


BROKEN_WORDS_JS = """() => {
    const out = [];
    const root = document.querySelector('#pl-qa-highlight .textfield');
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const m of node.data.matchAll(/\\S+/g)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (tops.size > 1) out.push(m[0]);
        }
    }
    return out;
}"""


@pytest.mark.parametrize("width", [390, 1400])
def test_no_word_of_the_context_is_broken_across_lines(browser, highlight_url, width):
    page = new_page(browser, viewport={"width": width, "height": 900})
    try:
        page.goto(highlight_url)
        expect(page.locator("#pl-qa-highlight .textfield")).to_contain_text("Kessling", timeout=60_000)
        words = page.evaluate("() => document.querySelector('#pl-qa-highlight .textfield').innerText")
        assert "Kessling" in words and "best-known" in words
        assert page.evaluate(BROKEN_WORDS_JS) == []
        shot(page, f"highlighted_words_{width}")
    finally:
        page.context.close()
