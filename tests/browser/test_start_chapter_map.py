"""The Start page: the book's chapters as a map whose "Try" buttons open the right tab with an
example loaded; every tab names its chapter and links its notebook."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from components.shell import course
from tests.browser.conftest import shot


def _tab(page, name: str):
    return page.locator("#main-tabs").get_by_role("tab", name=re.compile(rf"^\W*{name}\W*$"))


def test_the_start_page_lists_every_chapter_and_its_try_buttons_open_the_tab_with_the_example(page, app_url):
    page.goto(app_url)
    expect(_tab(page, "Start")).to_have_attribute("aria-selected", "true", timeout=60_000)  # a busy box loads slowly
    expect(page.locator("#start-intro")).to_contain_text("Start here")
    expect(page.locator("#start-route")).to_contain_text("A first hour")
    for c in course.CHAPTERS:
        row = page.locator(f"#start-ch{c.number}")
        expect(row).to_contain_text(f"{c.number}. {c.title}")
        expect(row.get_by_role("link", name="notebook")).to_have_attribute("href", c.notebook_url)
        expect(page.locator(f"#start-try-{c.number}")).to_have_count(1 if c.try_query else 0)
    shot(page, "course_start_page")

    # Chapter 3: Attention, with the book's sentence, and (cheap) already run.
    page.locator("#start-try-3").click()
    expect(_tab(page, "Attention")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#attention-tab textarea").first).to_have_value("time flies like an arrow")
    expect(page.locator("#attention-badge")).to_contain_text("7 tokens", timeout=120_000)  # [CLS] 5 words [SEP]
    expect(page.locator("#attention-chapter")).to_contain_text("Transformer Anatomy")
    shot(page, "course_start_try_attention")

    # Chapter 5: Decoding, with the unicorn prompt and beam search loaded, not run (generation is not cheap).
    _tab(page, "Start").click()
    page.locator("#start-try-5").click()
    expect(_tab(page, "Decoding")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#decoding-prompt textarea")).to_have_value(course.UNICORNS)
    expect(page.locator("#decoding-strategy input[value=beam]")).to_be_checked()
    expect(page.locator("#decoding-beams input[type=number]")).to_have_value("5")
    expect(page.locator("#decoding-text textarea")).to_have_value("")
    shot(page, "course_start_try_decoding")

    # Chapter 2: Tokenizers, run at once.
    _tab(page, "Start").click()
    page.locator("#start-try-2").click()
    expect(page.locator("#tok-text textarea")).to_have_value("Tokenizing text is a core task of NLP.")
    expect(page.locator("#tok-enc")).to_contain_text("token", timeout=60_000)
    assert not page.blocked_requests, page.blocked_requests


def test_every_tab_names_its_chapter_and_links_the_notebook(page, app_url):
    import app

    page.goto(app_url)
    for title, _, key, _ in app.TABS:
        _tab(page, title).click()
        header = page.locator(f"#{key}-chapter")
        expect(header).to_be_visible()
        expect(header).to_contain_text("Book: ch.")
        for c in course.chapters_for(key):
            expect(header.get_by_role("link").filter(has_text="notebook").nth(
                course.chapters_for(key).index(c))).to_have_attribute("href", c.notebook_url)
