"""The Tokenizers tab's links, on its own page (tab_url): a text too long for a link is left out of it
and the page says so; a hostile link's text is shown and tokenized as text, never run, and its unknown
parameters are dropped from the address."""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import expect

from tests.helpers.browser import shot

TAB = "tokenizers"  # its page holds this tab alone (tab_url, tests/conftest.py)


def _href(page) -> str:
    return page.evaluate("location.href")


def test_a_long_text_is_left_out_of_the_link_and_the_page_says_so(page, tab_url):
    page.goto(tab_url + "?tab=tokenizers")
    expect(page.locator("#tok-go")).to_be_visible(timeout=60_000)
    long_text = "Transformers read tokens. " * 80  # over 1,500 characters
    page.locator("#tok-text textarea").fill(long_text)
    page.locator("#tok-go").click()
    expect(page.locator("#tokenizers-link")).to_contain_text("Left out of the link", timeout=60_000)
    expect(page.locator("#tokenizers-link")).to_contain_text("text")
    page.wait_for_function("location.search.includes('omitted=text')")
    assert "Transformers+read" not in _href(page)


def test_a_hostile_query_string_is_harmless(page, tab_url):
    bad = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script>"
    page.goto(tab_url + "?tab=tokenizers&text=" + quote(bad) + "&special=%3Cb%3E&evil=1&omitted=%3Ci%3Etext")
    expect(page.locator("#tok-text textarea")).to_have_value(bad, timeout=60_000)
    expect(page.locator("#tok-enc")).to_contain_text("script", timeout=60_000)  # tokenized as text
    expect(page.locator("#tok-enc-summary")).to_contain_text("special")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#tokenizers-link img, #tokenizers-link script").count() == 0
    assert page.locator("main img[src=x]").count() == 0
    assert "evil" not in _href(page)
    shot(page, "tokenizers_link_hostile")
