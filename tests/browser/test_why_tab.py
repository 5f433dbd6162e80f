"""The Why tab in headless Chromium, opened by its "Why?" hand-offs: from a Pipelines
classification and from a Train-tab result (a highest-loss validation example), run, and read:
the heat strip, the checks in words, both figures."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot

SENTENCE = "The food was cold and the waiter was rude, but the dessert was lovely."


def _run_why_and_read(page) -> None:
    page.locator("#why-run").click()
    summary = page.locator("#why-summary")
    expect(summary).to_contain_text("Most faithful here", timeout=240_000)
    expect(summary).to_contain_text("Completeness")
    expect(page.locator("#why-strip .why-tok").first).to_be_visible()
    expect(page.locator("#why-deletion-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#why-agreement-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#why-table")).to_contain_text("occlusion")


def test_why_from_a_pipelines_classification(page, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.get_by_role("tab", name="Text classification", exact=True).click()
    page.locator("#pl-classify-tab textarea").first.fill(SENTENCE)
    page.locator("#pl-classify-run").click()
    expect(page.locator("#pl-classify-badge")).to_contain_text("Served by", timeout=180_000)
    page.locator("#pl-classify-tab").get_by_role("button", name="Why? (which words it rests on)").click()
    expect(page.locator("#why-text textarea")).to_have_value(SENTENCE, timeout=30_000)
    expect(page.locator("#why-task input[value=sentiment]")).to_be_checked()
    _run_why_and_read(page)
    expect(page.locator("#why-strip")).to_contain_text("dessert")
    shot(page, "why_from_pipelines")


def test_why_from_a_train_result(page, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile("^Train$")).first.click()
    expect(page.locator("#train-go")).to_be_visible(timeout=30_000)
    page.locator("#train-dataset input[value=sentiment]").check()
    page.locator("#train-methods label", has_text="fine-tuning").click()  # off: the probe trains in seconds
    page.locator("#train-go").click()
    expect(page.locator("#train-status")).to_contain_text("Done", timeout=240_000)
    text_cell = page.locator("#train-hardest [role=gridcell]").nth(4)  # row 1, column "text" (5 columns)
    expect(text_cell).to_be_visible(timeout=30_000)
    hard_text = text_cell.inner_text().strip()
    text_cell.click()
    try_box = page.locator("#train-text textarea, #train-text input").first
    expect(try_box).to_have_value(re.compile(re.escape(hard_text[:20])), timeout=30_000)
    page.locator("#train-tab").get_by_role("button", name="Why? (which words it rests on)").click()
    expect(page.locator("#why-task input[value=session]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(try_box.input_value())
    _run_why_and_read(page)
    expect(page.locator("#why-badge")).to_contain_text("your classifier")
    shot(page, "why_from_train")
