"""The Efficiency tab's compress section in headless Chromium: the default run step by step and
whole (table, scatter, pruning curve, the numbers of the run), the sentence box, a download, and
the section on a 420-px phone."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import open_raw_json, overflowing_tables, press_again, settled, shot
from tests.helpers.browser import new_page
TAB = "efficiency"  # its page holds this tab alone (tab_url, tests/conftest.py)

SCOPE = "#compress-panel"


def _open(page, tab_url):
    page.goto(tab_url + "?tab=efficiency")
    expect(page.locator("#compress-next")).to_be_visible(timeout=30_000)
    # the section's first view (the default run whole, its settings in the controls) has landed: a press
    # before it would be overwritten by it on a loaded box (the dropdown went back to "all")
    expect(page.locator("#compress-through input").first).to_have_value("all", timeout=60_000)
    expect(page.locator("#compress-table")).to_contain_text("ONNX Runtime", timeout=60_000)
    settled(page)
    page.locator("#compress-next").scroll_into_view_if_needed()


def test_the_pipeline_step_by_step_then_whole(page, tab_url):
    _open(page, tab_url)
    page.locator("#compress-next").click()  # step 1: the distilled student joins the baseline
    table = page.locator("#compress-table")
    expect(table).to_contain_text("Distilled student", timeout=60_000)
    expect(table).not_to_contain_text("ONNX Runtime")
    expect(page.locator("#compress-summary")).to_contain_text("Student")
    # The section opens on the whole run (through "all"); Next started the walk at its first step and the
    # dropdown follows. Its run ends on the page: the pruning plot, empty at this step, once threw a Plotly
    # error in the browser that left the status spinning and the dropdown on "all".
    through = page.locator("#compress-through input").first
    expect(through).to_have_value("distil", timeout=30_000)
    expect(page.locator("#compress-pruning")).to_contain_text("Pruning not run yet")
    settled(page)
    page.locator("#compress-next").click()  # step 2: int8
    expect(through).to_have_value("quantize", timeout=60_000)
    expect(table).to_contain_text("int8", timeout=60_000)
    expect(table).not_to_contain_text("ONNX Runtime")
    settled(page)
    through.click()
    page.get_by_role("option", name="all").click()
    page.locator("#compress-run-btn").click()
    expect(table).to_contain_text("ONNX Runtime, int8", timeout=60_000)
    expect(table).to_contain_text("pruned to 90% zeros")
    expect(page.locator("#compress-summary")).to_contain_text(re.compile(r"ONNX Runtime int8.*faster"))
    for plot in ("compress-scatter", "compress-pruning"):
        expect(page.locator(f"#{plot} .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#compress-scatter")).to_contain_text("latency")
    assert overflowing_tables(page, SCOPE) == []
    assert open_raw_json(page, SCOPE) == 0
    shot(page, "efficiency_compress")


def test_the_sentence_box_and_a_download(page, tab_url):
    _open(page, tab_url)
    page.locator("#compress-text textarea").fill("I miss my grandmother so much.")
    page.locator("#compress-predict-btn").click()
    note = page.locator("#compress-predict-note")
    expect(note).to_contain_text(re.compile(r"agree|Disagree"), timeout=180_000)  # first use loads 9 models
    table = page.locator("#compress-predict-table")
    table.scroll_into_view_if_needed()
    for variant in ("Fine-tuned baseline", "ONNX Runtime, int8", "pruned to 90% zeros"):  # 5 variants + 4 pruned
        expect(table).to_contain_text(variant)
    page.locator("#compress-download").click()
    expect(page.locator("#compress-download-note")).to_contain_text("MB", timeout=60_000)
    page.locator("#compress-text textarea").fill("")
    press_again(page, "#compress-predict-btn")
    expect(page.locator("#compress-predict-error")).to_contain_text("empty", timeout=30_000)


def test_the_section_fits_a_phone(browser, tab_url):
    page = new_page(browser, viewport={"width": 420, "height": 900})
    try:
        _open(page, tab_url)
        page.locator("#compress-run-btn").click()  # the baseline alone: instant
        expect(page.locator("#compress-table")).to_contain_text("Fine-tuned baseline", timeout=60_000)
        shot(page, "efficiency_compress_phone")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, f"the page scrolls sideways on a phone: {width}px"
        assert page.blocked_requests == []
    finally:
        page.context.close()
