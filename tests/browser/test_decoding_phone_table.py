"""On a 420-px phone the Decoding step table is readable: no cell narrower than its longest
word (the issue saw "entropy" printed one letter per line); the table scrolls inside itself,
never the page. On the Decoding tab's own page (tab_url)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.decoding_page import pick_strategy, set_number
from tests.helpers.browser import new_page
from tests.helpers.decoding_page import CRUSHED
TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_the_decoding_step_table_is_readable_on_a_phone(browser, tab_url):
    page = new_page(browser, viewport={"width": 420, "height": 900})
    try:
        page.goto(tab_url + "?tab=decoding")
        expect(page.locator("#decoding-run")).to_be_visible(timeout=30_000)
        pick_strategy(page, "sample")  # the widest table: the sampling columns too
        set_number(page, "decoding-max-new", 4)
        page.locator("#decoding-seed textarea, #decoding-seed input").first.fill("1")
        page.locator("#decoding-run").click()
        expect(page.locator("#decoding-stats")).to_contain_text(re.compile(r"sequence log-prob"), timeout=240_000)
        heads = page.locator("#decoding-steps thead th")
        expect(heads.filter(has_text="entropy")).to_have_count(1)
        page.locator("#decoding-steps").scroll_into_view_if_needed()
        crushed = page.evaluate(CRUSHED, "decoding-steps")
        shot(page, "course_phone_decoding_table")
        assert crushed == [], crushed
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, f"the page scrolls sideways on a phone: {width}px"
        assert page.blocked_requests == []
    finally:
        page.context.close()
