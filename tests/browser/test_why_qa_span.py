"""The Why tab's QA task run in the tab itself, on its own page (tab_url): the span's answer, the
question's part of the heat strip and the table's context rows; the table stays hidden until the first
run."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.why_page import QUICK, tick_only, run_why

TAB = "why"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_why_explains_a_qa_span_in_the_tab(page, tab_url):
    page.goto(tab_url + "?tab=why")  # by address: the page's load event selects the tab (slow on a busy box)
    expect(page.locator("#why-run")).to_be_visible(timeout=120_000)
    expect(page.locator("#why-table")).to_be_hidden()
    page.locator("#why-task input[value=qa]").check()
    page.locator("#why-text textarea").fill("The Eiffel Tower is in Paris. It was built in 1889 by Gustave Eiffel.")
    page.locator("#why-question textarea, #why-question input").first.fill("When was the Eiffel Tower built?")
    tick_only(page, QUICK)
    run_why(page)
    expect(page.locator("#why-summary")).to_contain_text("1889")
    expect(page.locator("#why-strip .why-part").first).to_contain_text("question")
    expect(page.locator("#why-table")).to_contain_text("context")
    shot(page, "why_qa_span")
