"""Links that restore a result: after a run the address bar holds a link; opened in a fresh page
it restores the tab's inputs (and, for a cheap tab, its result). A hostile link is harmless."""

from __future__ import annotations

import re
from urllib.parse import quote

from playwright.sync_api import expect

from tests.browser.conftest import shot
from tests.browser.test_decoding_tab import open_tab, pick_strategy, set_number
from tests.conftest import new_page


def _href(page) -> str:
    return page.evaluate("location.href")


def test_a_link_copied_after_a_decoding_run_restores_the_prompt_and_settings(page, browser, app_url):
    open_tab(page, app_url)
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
    shot(page, "course_link_decoding_run")

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
        shot(fresh, "course_link_decoding_restored")
        assert fresh.blocked_requests == []
    finally:
        fresh.context.close()


def test_a_link_to_attention_restores_the_layer_and_head_and_draws_them(page, app_url):
    page.goto(app_url + "?tab=attention&text=The+cat+sat+on+the+mat&text_b=&role=encoder&layer=3&head=2")
    expect(page.locator("#attention-tab textarea").first).to_have_value("The cat sat on the mat", timeout=60_000)
    expect(page.locator("#attention-badge")).to_contain_text("8 tokens", timeout=120_000)
    page.locator("#attention-tab").get_by_role("tab", name="Heatmap").click()
    expect(page.locator("#attention-heatmap")).to_contain_text("layer 3, head 2", timeout=60_000)
    assert "layer=3" in _href(page) and "head=2" in _href(page)
    shot(page, "course_link_attention_heatmap")


def test_a_long_text_is_left_out_of_the_link_and_the_page_says_so(page, app_url):
    page.goto(app_url + "?tab=tokenizers")
    expect(page.locator("#tok-go")).to_be_visible(timeout=60_000)
    long_text = "Transformers read tokens. " * 80  # over 1,500 characters
    page.locator("#tok-text textarea").fill(long_text)
    page.locator("#tok-go").click()
    expect(page.locator("#tokenizers-link")).to_contain_text("Left out of the link", timeout=60_000)
    expect(page.locator("#tokenizers-link")).to_contain_text("text")
    page.wait_for_function("location.search.includes('omitted=text')")
    assert "Transformers+read" not in _href(page)


def test_a_hostile_query_string_is_harmless(page, app_url):
    bad = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script>"
    page.goto(app_url + "?tab=tokenizers&text=" + quote(bad) + "&special=%3Cb%3E&evil=1&omitted=%3Ci%3Etext")
    expect(page.locator("#tok-text textarea")).to_have_value(bad, timeout=60_000)
    expect(page.locator("#tok-enc")).to_contain_text("script", timeout=60_000)  # tokenized as text
    expect(page.locator("#tok-enc-summary")).to_contain_text("special")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#tokenizers-link img, #tokenizers-link script").count() == 0
    assert page.locator("main img[src=x]").count() == 0
    assert "evil" not in _href(page)
    shot(page, "course_link_hostile_tokenizers")

    page.goto(app_url + "?tab=decoding&max_new=1e99&temperature=-5&strategy=%3Cscript%3E&top_p=NaN&tab=x")
    expect(page.locator("#main-tabs").get_by_role("tab", name=re.compile(r"Start"))).to_have_attribute(
        "aria-selected", "true", timeout=60_000)  # the last tab= wins, and "x" is no tab: the page opens as usual
    page.goto(app_url + "?tab=decoding&max_new=1e99&temperature=-5&strategy=%3Cscript%3E&top_p=NaN")
    expect(page.locator("#decoding-max-new input[type=number]")).to_have_value("512", timeout=30_000)
    expect(page.locator("#decoding-temperature input[type=number]")).to_have_value("0")
    expect(page.locator("#decoding-strategy input[value=greedy]")).to_be_checked()
    expect(page.locator("#decoding-top-p input[type=number]")).to_have_value("1")
    assert page.evaluate("window.__pwned") is None
