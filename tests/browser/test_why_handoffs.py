"""The Why tab opened from Pipelines' zero-shot (text and labels arrive together), NER and QA (context
and question) results: what a person sees. The table stays hidden until the first run. (Its QA task run
in the tab itself is checked on the Why tab's own page: tests/browser/test_why_qa_span.py.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot

TEXT = "The team won the championship after a dramatic final."
LABELS = "sport, politics, cooking"
NER_TEXT = "Angela Merkel visited Paris in May."
QUICK = ["occlusion", "gradient_x_input"]


def _open_subtab(page, app_url, name: str, run_id: str) -> None:
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.get_by_role("tab", name=name, exact=True).click()
    expect(page.locator(f"#{run_id}")).to_be_visible(timeout=30_000)


def _only(page, methods: list[str]) -> None:
    """Tick only `methods` in the Why tab's settings (a quick run)."""
    page.locator("#why-panel").get_by_text("Methods and settings").click()
    for box in page.locator("#why-methods input[type=checkbox]").all():
        if box.is_checked() != (box.get_attribute("value") in methods):
            box.click()


def _run(page) -> None:
    page.locator("#why-run").click()
    expect(page.locator("#why-summary")).to_contain_text("Most faithful here", timeout=240_000)
    expect(page.locator("#why-table")).to_be_visible()


def test_why_from_zero_shot_carries_text_and_labels(page, app_url):
    _open_subtab(page, app_url, "Zero-shot", "pl-zero_shot-run")
    tab = page.locator("#pl-zero_shot-tab")
    tab.locator("textarea").first.fill(TEXT)
    tab.get_by_label("Candidate labels (comma-separated)").fill(LABELS)
    page.locator("#pl-zero_shot-run").click()
    expect(page.locator("#pl-zero_shot-badge")).to_contain_text("Served by", timeout=180_000)
    tab.get_by_role("button", name="Why? (which words the top label rests on)").click()
    expect(page.locator("#why-task input[value=zero_shot]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(TEXT, timeout=30_000)
    expect(page.locator("#why-labels textarea, #why-labels input").first).to_have_value(LABELS)
    expect(page.locator("#why-table")).to_be_hidden()  # no result yet: no placeholder table
    _only(page, QUICK)
    _run(page)
    expect(page.locator("#why-summary")).to_contain_text("sport")
    shot(page, "why_from_zero_shot")


def test_why_from_ner_explains_the_first_entity(page, app_url):
    _open_subtab(page, app_url, "Named entities", "pl-ner-run")
    tab = page.locator("#pl-ner-tab")
    tab.locator("textarea").first.fill(NER_TEXT)
    tab.get_by_role("button", name="Why? (which words its first entity's tag rests on)").click()
    expect(page.locator("#why-task input[value=ner]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(NER_TEXT, timeout=30_000)
    _only(page, QUICK)
    _run(page)
    expect(page.locator("#why-summary")).to_contain_text(re.compile(r"token '\w+' tagged [BI]-PER"))


def test_why_from_a_qa_answer_carries_context_and_question(page, app_url):
    _open_subtab(page, app_url, "Question answering", "pl-qa-run")
    tab = page.locator("#pl-qa-tab")
    context = page.locator("#pl-qa-context textarea").input_value()
    question = tab.get_by_label("Question", exact=True).input_value()
    tab.get_by_role("button", name="Why this span? (which words it rests on)").click()
    expect(page.locator("#why-task input[value=qa]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(context, timeout=30_000)
    expect(page.locator("#why-question textarea, #why-question input").first).to_have_value(question)
    _only(page, QUICK)
    _run(page)
    expect(page.locator("#why-summary")).to_contain_text("span '")
