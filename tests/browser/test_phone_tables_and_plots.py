"""On a 420-px phone, a result table keeps whole words ("NEGAT..." no more) and a plot fits the screen: the
Tokenizers tab and Pipelines' Classify opened from links, on a page holding those two tabs (tab_url)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.helpers.browser import new_page, shot, until
TAB = ("tokenizers", "pipelines")


def test_tables_keep_whole_words_and_plots_fit_on_a_phone(browser, tab_url):
    from tests.helpers.decoding_page import CRUSHED

    page = new_page(browser, viewport={"width": 420, "height": 900})
    try:
        page.goto(tab_url + "?tab=tokenizers&text=Tokenizers+split+unbelievably+long+words")
        expect(page.locator("#tok-notice")).to_contain_text("What to notice", timeout=120_000)
        for table in ("tok-enc-table", "tok-dec-table"):  # read until figures.js has fitted the table
            assert until(page, lambda: page.evaluate(CRUSHED, table), lambda found: found == []) == [], table
        shot(page, "course_polish_phone_tokenizers")
        page.goto(tab_url + "?tab=pipelines-classify&text=The+battery+died+after+two+days.")
        expect(page.locator("#pl-classify-plot .tlab-notice")).to_contain_text("wins", timeout=120_000)
        visible_table = """() => { const t = [...document.querySelectorAll('[id^=pl-classify] .table-wrap')]
            .find(t => t.offsetParent !== null); return t ? t.closest('[id]').id : null; }"""
        table_id = until(page, lambda: page.evaluate(visible_table))
        assert table_id, "no Classify table"
        crushed = until(page, lambda: page.evaluate(CRUSHED, table_id), lambda found: found == [])
        assert crushed == []  # "NEGAT..." no more
        width = page.evaluate("document.querySelector('#pl-classify-plot .js-plotly-plot').getBoundingClientRect().right")
        assert width <= 420, width
        assert page.evaluate("document.documentElement.scrollWidth") <= 420
        shot(page, "course_polish_phone_classify")
        assert page.blocked_requests == []
    finally:
        page.context.close()
