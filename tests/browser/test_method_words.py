"""What the Pipelines tab says about how a task is served is what its result says: the intro is
written from the serving decision (config.METHOD_WORDS), and so is each result's badge. And an
error's toast does not outlive it: the message stays inline, the toast goes."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.pipelines_page import open_subtab

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_the_intro_says_what_the_results_say(page, tab_url):
    open_subtab(page, tab_url, "Text classification")
    intro = page.get_by_text(re.compile(r"On this app, sentiment, NER and QA: fine-tuned here")).first
    expect(intro).to_be_visible()
    text = intro.inner_text()
    assert "zero-shot: embedding similarity" in text and "logistic regression" not in text
    page.locator("#pl-classify-run").click()
    badge = page.locator("#pl-classify-badge")
    expect(badge).to_contain_text("fine-tuned here", timeout=240_000)
    page.get_by_role("tab", name="Zero-shot", exact=True).click()
    page.locator("#pl-zero_shot-run").click()
    expect(page.locator("#pl-zero_shot-badge")).to_contain_text("embedding similarity", timeout=120_000)
    shot(page, "method_words_intro_and_badge")


def test_an_error_toast_does_not_outlive_its_error(page, tab_url):
    open_subtab(page, tab_url, "Fill-mask")
    box = page.locator("#pl-fill_mask-text textarea")
    for text in ("", "No mask in this sentence."):  # two errors in a row
        box.fill(text)
        page.locator("#pl-fill_mask-run").click()
        expect(page.locator("#pl-fill_mask-error")).to_be_visible(timeout=60_000)
    expect(page.locator("#pl-fill_mask-error")).to_contain_text("MASK")  # the latest one, inline
    expect(page.locator(".toast-body")).to_have_count(0, timeout=7_000)  # toasts live 5 s
    shot(page, "error_toast_gone")
