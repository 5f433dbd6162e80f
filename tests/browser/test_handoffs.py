"""Hand-offs: a sentence tried in Pipelines opens, in one click and without retyping, in the
Tokenizers and Attention tabs (which run it), and a generation prompt opens in Decoding."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot

SENTENCE = "Angela Merkel met Emmanuel Macron in Berlin."


def _pipelines_task(page, app_url, task: str):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.get_by_role("tab", name=task, exact=True).click()


def test_a_ner_sentence_opens_in_attention_and_tokenizers(page, app_url):
    _pipelines_task(page, app_url, "Named entities")
    page.locator("#pl-ner-tab textarea").first.fill(SENTENCE)
    page.locator("#pl-ner-tab").get_by_role("button", name="See its attention").click()
    expect(page.locator("#attention-tab textarea").first).to_have_value(SENTENCE, timeout=30_000)
    expect(page.locator("#attention-tab input[value=encoder]")).to_be_checked()
    # Attention is quick: the hand-off ran it on this sentence.
    expect(page.locator("#attention-badge")).to_contain_text("Served by", timeout=120_000)
    page.locator("#attention-tab").get_by_role("tab", name="Heatmap").click()
    expect(page.locator("#attention-heatmap")).to_contain_text("emmanuel", timeout=60_000)  # its tokens, uncased
    shot(page, "course_handoff_attention")

    _pipelines_task(page, app_url, "Named entities")
    page.locator("#pl-ner-tab textarea").first.fill(SENTENCE)
    page.locator("#pl-ner-tab").get_by_role("button", name="See its tokens").click()
    expect(page.locator("#tok-text textarea")).to_have_value(SENTENCE, timeout=30_000)


def test_a_generation_prompt_opens_in_decoding_whole(page, app_url):
    long_prompt = "Dear Bumblebee, " + "thank you for your letter. " * 80  # longer than a link carries
    _pipelines_task(page, app_url, "Text generation")
    page.locator("#pl-generate_text-tab textarea").first.fill(long_prompt)
    page.locator("#pl-generate_text-tab").get_by_role("button", name="Step through it in Decoding").click()
    expect(page.locator("#decoding-prompt textarea")).to_have_value(long_prompt, timeout=30_000)
    shot(page, "course_handoff_decoding")
