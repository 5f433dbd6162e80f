"""Summarization in headless Chromium: the words of the summary that its text does not support
are marked (a title on each saying why), with their count and the one-line reason abstractive
models do this; the extractive summary sits beside lead-3, and the ROUGE table has all three."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.pipelines_page import open_subtab
from tests.helpers.summary_texts import NEWS, REFERENCE

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)

RUN_TIMEOUT = 180_000


def test_unsupported_items_are_highlighted_and_counted(page, tab_url):
    open_subtab(page, tab_url, "Summarization")
    page.locator("#pl-summarize-text textarea").fill(NEWS)
    # The box held the example and its reference: the edit clears that reference by a round trip to the
    # server. Paste ours only once it has, or the late clearing wipes it (a CI run lost its ROUGE so).
    reference = page.locator("#pl-summarize-reference textarea")
    expect(reference).to_have_value("")
    expect(page.locator("#pl-summarize-reference-note")).to_contain_text("Reference cleared")
    reference.fill(REFERENCE)
    expect(page.locator("#pl-summarize-reference-note")).to_contain_text("A reference belongs to one text")
    page.locator("#pl-summarize-run").click()
    count = page.locator("#pl-summarize-support-count")
    expect(count).to_contain_text(re.compile(r"\d+ items? the text does not support"), timeout=RUN_TIMEOUT)
    total = int(re.search(r"(\d+) items?", count.inner_text()).group(1))
    marks = page.locator("#pl-summarize-support mark.tlab-unsupported")
    assert total >= 1 and marks.count() == total  # the model's summary of NEWS adds what NEWS lacks
    assert marks.first.get_attribute("title").startswith("not in the text")
    expect(page.locator("#pl-summarize-support")).to_contain_text("An abstractive model writes each word")
    summary = page.locator("#pl-summarize-output textarea").input_value()
    assert all(m in summary for m in marks.all_inner_texts())  # marks are pieces of the summary shown
    expect(page.locator("#pl-summarize-extractive textarea")).not_to_have_value("")
    extractive = page.locator("#pl-summarize-extractive textarea").input_value()
    assert all(f"{part}." in NEWS for part in extractive.rstrip(".").split(". "))  # whole sentences of NEWS
    expect(page.locator("#pl-summarize-scores")).to_contain_text("extractive (MMR)")
    shot(page, "pipelines_summary_support")
