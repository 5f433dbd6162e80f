"""Pipelines' tasks have links too: a link opens the Pipelines tab at its task with its inputs
(and runs a quick task at once), a run writes the link, and the Start page's chapter 4 button
opens NER with a news sentence found by the model trained here."""

from __future__ import annotations

import re
from urllib.parse import quote

from playwright.sync_api import expect

from tests.browser.conftest import shot
from tests.conftest import new_page

SENTENCE = "Angela Merkel met Emmanuel Macron in Berlin to discuss Airbus."


def test_a_link_opens_the_ner_task_with_its_text_and_runs_it(page, app_url):
    page.goto(f"{app_url}?tab=pipelines-ner&text={quote(SENTENCE)}&aggregation=first")
    expect(page.locator("#pl-ner-run")).to_be_visible(timeout=60_000)  # Pipelines, at the NER task
    expect(page.locator("#pl-ner-tab textarea").first).to_have_value(SENTENCE)
    expect(page.locator("#pl-ner-tab input[value=first]")).to_be_checked()
    # NER is quick: the link ran it, and the result is this text's entities.
    highlight = page.locator("#pl-ner-highlight")
    expect(highlight).to_contain_text("Emmanuel Macron", timeout=120_000)
    expect(page.locator("#pl-ner-table")).to_contain_text("Airbus")
    shot(page, "course_link_pipelines_ner")


def test_a_run_writes_a_link_that_reopens_the_task(page, browser, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.get_by_role("tab", name="Fill-mask", exact=True).click()
    page.locator("#pl-fill_mask-tab textarea").first.fill("The cat sat on the [MASK].")
    page.locator("#pl-fill_mask-run").click()
    expect(page.locator("#pipelines-fill_mask-link a")).to_have_text("Link to this result", timeout=180_000)
    page.wait_for_function("location.search.includes('tab=pipelines-fill_mask')")
    link = page.evaluate("location.href")
    assert "text=The+cat+sat+on+the+%5BMASK%5D." in link or "text=The%20cat" in link, link
    fresh = new_page(browser)  # a fresh visitor: nothing of this page's session
    try:
        fresh.goto(link)
        expect(fresh.locator("#pl-fill_mask-tab textarea").first).to_have_value("The cat sat on the [MASK].",
                                                                                timeout=60_000)
        expect(fresh.locator("#pl-fill_mask-run")).to_be_visible()
        assert fresh.blocked_requests == []
    finally:
        fresh.context.close()


def test_the_start_page_opens_ner_on_a_news_sentence(page, app_url):
    page.goto(app_url)
    page.locator("#start-try-4").click()
    expect(page.locator("#pl-ner-tab textarea").first).to_have_value(SENTENCE, timeout=60_000)
    expect(page.locator("#pl-ner-highlight")).to_contain_text("Angela Merkel", timeout=120_000)
    shot(page, "course_start_try_ner")
