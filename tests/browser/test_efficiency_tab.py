"""Efficiency tab in headless Chromium: a small fp32-vs-int8 run shows tables, scatters and the model."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import open_raw_json, overflowing_tables, shot

TAB = "efficiency"  # its page holds this tab alone (tab_url, tests/conftest.py)

SCOPE = "#efficiency-tab"


def _set_slider(page, elem_id, value):
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def test_small_run_shows_tables_plots_and_model(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile("^efficiency$", re.I)).first.click()
    expect(page.locator("#efficiency-run")).to_be_visible(timeout=30_000)
    _set_slider(page, "efficiency-prompts", 1)
    _set_slider(page, "efficiency-texts", 1)
    page.locator("#efficiency-run").click()
    summary = page.locator("#efficiency-summary")
    expect(summary).to_contain_text("greedy tok/s", timeout=240_000)
    expect(summary).to_contain_text("identical on the first 8 tokens")
    expect(page.locator("#efficiency-badge")).to_contain_text("SmolLM2")
    expect(page.locator("#efficiency-badge")).to_contain_text("int8")
    table = page.locator("#efficiency-decoder-table")
    expect(table).to_contain_text("fp32")
    expect(table).to_contain_text("int8")
    expect(page.locator("#efficiency-encoder-table")).to_contain_text("int8")
    for plot in ("efficiency-decoder-plot", "efficiency-encoder-plot"):
        expect(page.locator(f"#{plot} .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#efficiency-decoder-plot")).to_contain_text("perplexity")
    assert page.locator("#efficiency-prompts-table tbody tr").count() == 1
    heads = [h.strip() for h in page.locator("#efficiency-decoder-table thead th").all_inner_texts()]
    assert heads[:3] == ["model", "tok/s", "perplexity"]
    assert overflowing_tables(page, SCOPE) == []
    assert open_raw_json(page, SCOPE) == 0
    assert page.blocked_requests == []
    shot(page, "efficiency_tab")

    # (no error check here: the sliders clamp what a person can type, so this tab's form cannot send
    # bad input; the error box is wired with clear_on_error like the Decoding tab's, checked there)
