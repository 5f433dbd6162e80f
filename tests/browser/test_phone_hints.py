"""What a 390-px phone is told about what lies past its edge: the Start picture's decoder (SmolLM2) column
starts off-screen, and a result table wider than its box shows two of its columns; each says so above
itself ("swipe it sideways", "Scroll sideways for more columns"), and neither hint shows where all fits (1400 px)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.browser import new_page
from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def hints_url():
    import gradio as gr

    from components.efficiency import compress_ui
    from components.shell import figure_tools
    from components.start import ui as start
    from tests.helpers.figure_boxes import compress_rows

    def build():
        figure_tools()  # the page's table script and styles, as app.py places them
        start._architecture()
        gr.Dataframe(compress_ui.table_rows({"rows": compress_rows()}), headers=compress_ui.TABLE_HEADERS,
                     interactive=False, wrap=True, column_widths=compress_ui.TABLE_WIDTHS, elem_id="hint-table")

    with served_tab(build, themed=True) as url:
        yield url


HINT_JS = """() => {
    const box = document.querySelector('#hint-table .table-container');
    // a person can reach the columns past the edge: the box scrolls (Gradio's overflow-x: hidden clipped them)
    const scrolled = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
    return {wide: box.scrollWidth > box.clientWidth + 2, scrolled: scrolled,
            hint: getComputedStyle(box, '::before').content};
}"""


@pytest.mark.parametrize("width", [390, 1400])
def test_what_lies_past_the_edge_is_announced_only_where_it_does(browser, hints_url, width):
    page = new_page(browser, viewport={"width": width, "height": 900})
    try:
        page.goto(hints_url)
        expect(page.locator("#hint-table")).to_contain_text("Student on ONNX Runtime, int8", timeout=60_000)
        scroll = page.locator("#start-arch .tlab-arch-scroll")
        arch_wide = scroll.evaluate("e => e.scrollWidth > e.clientWidth + 2")
        hint = page.locator("#start-arch .tlab-arch-hint")
        if width == 390:
            assert arch_wide  # the decoder column is past the edge...
            expect(hint).to_be_visible()  # ...and the page says so
            expect(hint).to_contain_text("decoder (SmolLM2) column")
        else:
            assert not arch_wide
            expect(hint).to_be_hidden()
        page.wait_for_timeout(600)  # figures.js marks a wide table after its pass
        got = page.evaluate(HINT_JS)
        if got["wide"]:
            assert "Scroll sideways for more columns" in got["hint"] and got["scrolled"], got
        else:
            assert got["hint"] in ("none", "normal", ""), got
        assert got["wide"] == (width == 390), got  # a phone shows part of the six columns; a desktop all of them
        shot(page, f"phone_hints_{width}")
    finally:
        page.context.close()
