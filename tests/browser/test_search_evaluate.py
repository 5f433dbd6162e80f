"""Chapter 7's evaluation in the Semantic search tab, in headless Chromium: the summary, the plot and
its "What to notice" line, one table row per question, and both models named."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from backend.search.reader_eval import load_questions
from tests.helpers.browser import open_raw_json, overflowing_tables, shot

TAB = "search"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_the_evaluation_shows_its_numbers_a_plot_and_every_question(page, tab_url):
    page.goto(tab_url + "?tab=search")
    page.get_by_text("Evaluate the retriever and the reader (chapter 7)").click()
    page.locator("#search-evaluate").click()
    summary = page.locator("#search-evaluate-summary")
    expect(summary).to_contain_text("Reader on the gold passage", timeout=600_000)
    f1 = re.search(r"its ceiling\): EM [\d.]+%, F1 ([\d.]+)%", summary.inner_text()).group(1)
    plot = page.locator("#search-evaluate-plot .js-plotly-plot")
    expect(plot).to_be_visible(timeout=30_000)
    expect(page.locator("#search-evaluate-plot")).to_contain_text(f"F1 {f1}%")  # the ceiling's line, same number
    notice = page.locator("#search-evaluate-plot").locator("xpath=..").locator(".tlab-notice")
    expect(notice.first).to_contain_text("The retriever puts the gold passage first")
    page.get_by_text("Every question: what the reader said").click()
    table = page.locator("#search-evaluate-table")
    expect(table.locator("tbody tr")).to_have_count(len(load_questions()))
    expect(table).to_contain_text("rank of gold passage")
    expect(table).to_contain_text(load_questions()[0]["question"])
    expect(page.locator("#search-evaluate-badge")).to_contain_text("Reader: Served by")
    expect(page.locator("#search-evaluate-badge")).to_contain_text("Retriever: Served by")
    assert open_raw_json(page, "#search-tab") == 0
    assert overflowing_tables(page, "#search-tab") == []
    shot(page, "search_evaluate")
