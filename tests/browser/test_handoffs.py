"""Hand-offs, on one page: a sentence tried in Pipelines opens, in one click and without retyping, in the
Tokenizers and Attention tabs (which run it), and a generation prompt opens in Decoding; the Why tab opened
from Pipelines' zero-shot (text and labels arrive together), NER and QA (context and question) results,
from a Pipelines classification and from a Train-tab result (a highest-loss validation example), run, and
read: the heat strip, the checks in words, both figures. The table stays hidden until the first run. (Why's
QA task run in the tab itself is checked on the Why tab's own page: tests/browser/test_why_qa_span.py.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import settled, shot

# Its page holds the tabs the hand-offs cross, not the whole app (tab_url).
TAB = ("pipelines", "train", "tokenizers", "attention", "why", "decoding")
SENTENCE = "Angela Merkel met Emmanuel Macron in Berlin."
TEXT = "The team won the championship after a dramatic final."
LABELS = "sport, politics, cooking"
NER_TEXT = "Angela Merkel visited Paris in May."
REVIEW = "The food was cold and the waiter was rude, but the dessert was lovely."
QUICK = ["occlusion", "gradient_x_input"]


def _pipelines_task(page, task: str, run_id: str | None = None) -> None:
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.get_by_role("tab", name=task, exact=True).click()
    if run_id:
        expect(page.locator(f"#{run_id}")).to_be_visible(timeout=30_000)


def _mark_summary(page) -> None:
    """Mark the Why summary on screen (a node inside its rendered text, gone once that text is replaced)."""
    page.evaluate("""() => { const p = document.querySelector('#why-summary p');
        if (p) p.append(Object.assign(document.createElement('span'), {className: 'tlab-test-stale'})); }""")


def _summary_replaced(page) -> None:
    """The marked summary is gone: cleared (a hand-off blanks it) or replaced, so the previous run's
    "Most faithful here" cannot answer the next wait."""
    expect(page.locator("#why-summary .tlab-test-stale")).to_have_count(0, timeout=30_000)


def _handed_to_why(page) -> None:
    """After a hand-off into Why: any run it started has ended before the settings are changed (the next
    run's wait is guarded by its own mark: the previous "Most faithful here" cannot answer it)."""
    settled(page)


def _methods(page, methods: list[str] | None) -> None:
    """Tick only `methods` in the Why tab's settings (None: every method, the default). The accordion is
    opened only if it is closed (a click on an open one closes it)."""
    boxes = page.locator("#why-methods input[type=checkbox]")
    if not boxes.first.is_visible():
        page.locator("#why-panel").get_by_text("Methods and settings").click()
        expect(boxes.first).to_be_visible()
    for box in boxes.all():
        if box.is_checked() != (methods is None or box.get_attribute("value") in methods):
            box.click()
    for box in boxes.all():
        expect(box).to_be_checked(checked=methods is None or box.get_attribute("value") in methods)


def _run_quick(page) -> None:
    _mark_summary(page)
    page.locator("#why-run").click()
    _summary_replaced(page)
    expect(page.locator("#why-summary")).to_contain_text("Most faithful here", timeout=240_000)
    expect(page.locator("#why-table")).to_be_visible()
    settled(page)


def _run_why_and_read(page) -> None:
    _mark_summary(page)
    page.locator("#why-run").click()
    _summary_replaced(page)
    summary = page.locator("#why-summary")
    expect(summary).to_contain_text("Most faithful here", timeout=240_000)
    expect(summary).to_contain_text("Completeness")
    expect(page.locator("#why-strip .why-tok").first).to_be_visible()
    expect(page.locator("#why-deletion-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#why-agreement-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#why-table")).to_contain_text("occlusion")
    settled(page)


def test_hand_offs_into_attention_tokenizers_decoding_and_why(page, tab_url):
    page.goto(tab_url)

    # ---- a NER sentence opens in Attention and Tokenizers
    _pipelines_task(page, "Named entities")
    page.locator("#pl-ner-tab textarea:not(.tlab-ch-answer)").first.fill(SENTENCE)
    page.locator("#pl-ner-tab").get_by_role("button", name="See its attention").click()
    expect(page.locator("#attention-tab textarea:not(.tlab-ch-answer)").first).to_have_value(SENTENCE, timeout=30_000)
    expect(page.locator("#attention-tab input[value=encoder]")).to_be_checked()
    # Attention is quick: the hand-off ran it on this sentence.
    expect(page.locator("#attention-badge")).to_contain_text("Served by", timeout=120_000)
    page.locator("#attention-tab").get_by_role("tab", name="Heatmap").click()
    expect(page.locator("#attention-heatmap")).to_contain_text("emmanuel", timeout=60_000)  # its tokens, uncased
    shot(page, "course_handoff_attention")

    _pipelines_task(page, "Named entities")
    page.locator("#pl-ner-tab textarea:not(.tlab-ch-answer)").first.fill(SENTENCE)
    page.locator("#pl-ner-tab").get_by_role("button", name="See its tokens").click()
    expect(page.locator("#tok-text textarea")).to_have_value(SENTENCE, timeout=30_000)

    # ---- a generation prompt opens in Decoding whole
    long_prompt = "Dear Bumblebee, " + "thank you for your letter. " * 80  # longer than a link carries
    _pipelines_task(page, "Text generation")
    page.locator("#pl-generate_text-tab textarea:not(.tlab-ch-answer)").first.fill(long_prompt)
    page.locator("#pl-generate_text-tab").get_by_role("button", name="Step through it in Decoding").click()
    expect(page.locator("#decoding-prompt textarea")).to_have_value(long_prompt, timeout=30_000)
    shot(page, "course_handoff_decoding")

    # ---- Why from zero-shot carries text and labels
    _pipelines_task(page, "Zero-shot", "pl-zero_shot-run")
    tab = page.locator("#pl-zero_shot-tab")
    tab.locator("textarea").first.fill(TEXT)
    tab.get_by_label("Candidate labels (comma-separated)").fill(LABELS)
    page.locator("#pl-zero_shot-run").click()
    expect(page.locator("#pl-zero_shot-badge")).to_contain_text("Served by", timeout=180_000)
    settled(page)  # the badge shows before the run has ended (its code view is still being written): then hand off
    tab.get_by_role("button", name="Why? (which words the top label rests on)").click()
    expect(page.locator("#why-task input[value=zero_shot]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(TEXT, timeout=30_000)
    expect(page.locator("#why-labels textarea, #why-labels input").first).to_have_value(LABELS)
    expect(page.locator("#why-table")).to_be_hidden()  # no result yet: no placeholder table
    _methods(page, QUICK)
    _run_quick(page)
    expect(page.locator("#why-summary")).to_contain_text("sport")
    shot(page, "why_from_zero_shot")

    # ---- Why from NER explains the first entity
    _pipelines_task(page, "Named entities", "pl-ner-run")
    tab = page.locator("#pl-ner-tab")
    tab.locator("textarea").first.fill(NER_TEXT)
    _mark_summary(page)
    tab.get_by_role("button", name="Why? (which words its first entity's tag rests on)").click()
    expect(page.locator("#why-task input[value=ner]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(NER_TEXT, timeout=30_000)
    _handed_to_why(page)
    _methods(page, QUICK)
    _run_quick(page)
    expect(page.locator("#why-summary")).to_contain_text(re.compile(r"token '\w+' tagged [BI]-PER"))

    # ---- Why from a QA answer carries context and question
    _pipelines_task(page, "Question answering", "pl-qa-run")
    tab = page.locator("#pl-qa-tab")
    context = page.locator("#pl-qa-context textarea").input_value()
    question = tab.get_by_label("Question", exact=True).input_value()
    _mark_summary(page)
    tab.get_by_role("button", name="Why this span? (which words it rests on)").click()
    expect(page.locator("#why-task input[value=qa]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(context, timeout=30_000)
    expect(page.locator("#why-question textarea, #why-question input").first).to_have_value(question)
    _handed_to_why(page)
    _methods(page, QUICK)
    _run_quick(page)
    expect(page.locator("#why-summary")).to_contain_text("span '")

    # ---- Why from a Pipelines classification (every method, the default)
    _pipelines_task(page, "Text classification")
    page.locator("#pl-classify-tab textarea:not(.tlab-ch-answer)").first.fill(REVIEW)
    page.locator("#pl-classify-run").click()
    expect(page.locator("#pl-classify-badge")).to_contain_text("Served by", timeout=180_000)
    _mark_summary(page)
    page.locator("#pl-classify-tab").get_by_role("button", name="Why? (which words it rests on)").click()
    expect(page.locator("#why-text textarea")).to_have_value(REVIEW, timeout=30_000)
    expect(page.locator("#why-task input[value=sentiment]")).to_be_checked()
    _handed_to_why(page)
    _methods(page, None)
    _run_why_and_read(page)
    expect(page.locator("#why-strip")).to_contain_text("dessert")
    shot(page, "why_from_pipelines")

    # ---- Why from a Train result (a highest-loss validation example; every method)
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
    _mark_summary(page)
    page.locator("#train-tab").get_by_role("button", name="Why? (which words it rests on)").click()
    expect(page.locator("#why-task input[value=session]")).to_be_checked(timeout=30_000)
    expect(page.locator("#why-text textarea")).to_have_value(try_box.input_value())
    _handed_to_why(page)
    _methods(page, None)
    _run_why_and_read(page)
    expect(page.locator("#why-badge")).to_contain_text("your classifier")
    shot(page, "why_from_train")
