"""Pipelines' tasks have links too, on the Pipelines tab's own page (tab_url): a link opens the tab at its
task with its inputs (and runs a quick task at once), and a run writes the link. (The Start page's
chapter 4 button opening NER on a news sentence is walked on the whole page:
tests/browser/test_start_page_flow.py.)"""

from __future__ import annotations

import re
from urllib.parse import quote

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.browser import new_page
TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)

SENTENCE = "Angela Merkel met Emmanuel Macron in Berlin to discuss Airbus."


def test_a_link_opens_the_ner_task_with_its_text_and_runs_it(page, tab_url):
    page.goto(f"{tab_url}?tab=pipelines-ner&text={quote(SENTENCE)}&aggregation=first")
    expect(page.locator("#pl-ner-run")).to_be_visible(timeout=60_000)  # Pipelines, at the NER task
    expect(page.locator("#pl-ner-tab textarea:not(.tlab-ch-answer)").first).to_have_value(SENTENCE)
    expect(page.locator("#pl-ner-tab input[value=first]")).to_be_checked()
    # NER is quick: the link ran it, and the result is this text's entities.
    highlight = page.locator("#pl-ner-highlight")
    expect(highlight).to_contain_text("Emmanuel Macron", timeout=120_000)
    expect(page.locator("#pl-ner-table")).to_contain_text("Airbus")
    shot(page, "pipelines_link_ner")


def test_a_run_writes_a_link_that_reopens_the_task(page, browser, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.get_by_role("tab", name="Fill-mask", exact=True).click()
    page.locator("#pl-fill_mask-tab textarea:not(.tlab-ch-answer)").first.fill("The cat sat on the [MASK].")
    page.locator("#pl-fill_mask-run").click()
    expect(page.locator("#pipelines-fill_mask-link a")).to_have_text("Link to this result", timeout=180_000)
    page.wait_for_function("location.search.includes('tab=pipelines-fill_mask')")
    link = page.evaluate("location.href")
    assert "text=The+cat+sat+on+the+%5BMASK%5D." in link or "text=The%20cat" in link, link
    fresh = new_page(browser)  # a fresh visitor: nothing of this page's session
    try:
        fresh.goto(link)
        expect(fresh.locator("#pl-fill_mask-tab textarea:not(.tlab-ch-answer)").first).to_have_value("The cat sat on the [MASK].",
                                                                                timeout=60_000)
        expect(fresh.locator("#pl-fill_mask-run")).to_be_visible()
        assert fresh.blocked_requests == []
    finally:
        fresh.context.close()

