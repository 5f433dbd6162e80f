"""The QA sub-tab on the local profile (span-decoding): the Rhine's length is a span of the text,
marked exactly in the context; a question the text does not answer shows "No answer in this text"
and marks nothing."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.runtime import config
from components.pipelines.examples import RHINE, RHINE_LABELS
from components.pipelines.plots import NO_ANSWER
from tests.helpers.browser import shot
from tests.helpers.pipelines_page import open_subtab

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)


def _marked(page) -> list[list[str]]:
    """[text, label] of each mark in the highlight (Gradio 6: a `.token.highlighted` holds `.text`, `.label`)."""
    return page.evaluate("""() => [...document.querySelectorAll('#pl-qa-highlight .token.highlighted')]
        .map(e => [e.querySelector('.text')?.textContent ?? '', e.querySelector('.label')?.textContent ?? ''])""")


def _run(page, tab_url, label):
    open_subtab(page, tab_url, "Question answering")
    page.get_by_role("button", name=label, exact=True).first.click()
    expect(page.locator("#pl-qa-context textarea")).to_have_value(RHINE)
    page.locator("#pl-qa-model textarea, #pl-qa-model input").first.fill("span-decoding")  # the reader serves qa
    page.locator("#pl-qa-run").click()
    badge = page.locator("#pl-qa-badge")
    expect(badge).to_contain_text(config.METHOD_SPAN, timeout=180_000)
    return badge


def test_the_rhine_answer_is_a_span_marked_in_the_context(page, tab_url):
    badge = _run(page, tab_url, RHINE_LABELS[0])
    expect(badge).to_contain_text("fallback: small chat model, English")
    answer = page.locator("#pl-qa-answer h3")
    expect(answer).to_contain_text("1,230 km", timeout=30_000)
    text = answer.inner_text().strip()
    assert text in RHINE and text != NO_ANSWER
    marked = [t.strip() for t, _ in _marked(page)]
    # The answer is marked exactly; the other marks are non-overlapping alternatives (top-n 3), the text's own.
    assert text in marked and len(marked) <= 3 and all(m in RHINE for m in marked), marked
    expect(page.locator("#pl-qa-table")).to_contain_text("1,230 km")
    shot(page, "pipelines_qa_spans_rhine")


def test_an_unanswerable_question_shows_no_answer(page, tab_url):
    badge = _run(page, tab_url, RHINE_LABELS[1])
    expect(page.locator("#pl-qa-answer h3")).to_have_text(NO_ANSWER, timeout=30_000)
    expect(badge).to_contain_text("No answer in this text")
    assert _marked(page) == []
    shot(page, "pipelines_qa_spans_no_answer")
