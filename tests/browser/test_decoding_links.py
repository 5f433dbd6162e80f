"""The Decoding tab's links, on its own page (tab_url): after a run the address bar holds a link that,
opened in a fresh page, restores the prompt and settings (not the result); a hostile link's values are
clamped to what the knobs allow. (An unknown `tab=` opening the Start page is checked on the whole page:
tests/browser/test_start_page_flow.py.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.decoding_page import open_tab, pick_strategy, set_number
from tests.helpers.browser import new_page
TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)


def _href(page) -> str:
    return page.evaluate("location.href")


def test_a_link_copied_after_a_decoding_run_restores_the_prompt_and_settings(page, browser, tab_url):
    open_tab(page, tab_url)
    page.locator("#decoding-prompt textarea").fill("The teacher sent a link & it said: 50% off")
    pick_strategy(page, "sample")
    set_number(page, "decoding-max-new", 6)
    set_number(page, "decoding-temperature", 0.7)
    set_number(page, "decoding-top-k", 40)
    page.locator("#decoding-seed textarea, #decoding-seed input").first.fill("7")
    page.locator("#decoding-run").click()
    expect(page.locator("#decoding-stats")).to_contain_text(re.compile(r"sequence log-prob"), timeout=240_000)
    expect(page.locator("#decoding-link a")).to_have_text("Link to this result", timeout=30_000)
    page.wait_for_function("location.search.includes('tab=decoding') && location.search.includes('max_new=')")
    link = _href(page)
    assert "max_new=6" in link and "temperature=0.7" in link and "seed=7" in link, link
    assert page.locator("#decoding-link a").get_attribute("href") == "?" + link.split("?", 1)[1]
    shot(page, "decoding_link_run")

    fresh = new_page(browser)  # a fresh visitor: nothing of this page's session
    try:
        fresh.goto(link)
        expect(fresh.locator("#decoding-prompt textarea")).to_have_value("The teacher sent a link & it said: 50% off",
                                                                          timeout=60_000)
        expect(fresh.locator("#decoding-strategy input[value=sample]")).to_be_checked()
        expect(fresh.locator("#decoding-max-new input[type=number]")).to_have_value("6")
        expect(fresh.locator("#decoding-temperature input[type=number]")).to_have_value("0.7")
        expect(fresh.locator("#decoding-top-k input[type=number]")).to_have_value("40")
        expect(fresh.locator("#decoding-seed textarea, #decoding-seed input").first).to_have_value("7")
        expect(fresh.locator("#decoding-temperature input[type=number]")).to_be_enabled()  # sampling knobs live
        expect(fresh.locator("#decoding-text textarea")).to_have_value("")  # restored, not re-run
        shot(fresh, "decoding_link_restored")
        assert fresh.blocked_requests == []
    finally:
        fresh.context.close()


def test_a_hostile_decoding_link_is_clamped_to_what_the_knobs_allow(page, tab_url):
    page.goto(tab_url + "?tab=decoding&max_new=1e99&temperature=-5&strategy=%3Cscript%3E&top_p=NaN")
    expect(page.locator("#decoding-max-new input[type=number]")).to_have_value("512", timeout=30_000)
    expect(page.locator("#decoding-temperature input[type=number]")).to_have_value("0")
    expect(page.locator("#decoding-strategy input[value=greedy]")).to_be_checked()
    expect(page.locator("#decoding-top-p input[type=number]")).to_have_value("1")
    assert page.evaluate("window.__pwned") is None
