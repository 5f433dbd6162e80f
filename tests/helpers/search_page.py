"""The Semantic search tab in the browser: open it."""

from __future__ import annotations

import re

from playwright.sync_api import expect



def open_tab(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile("search", re.I)).first.click()
    expect(page.locator("#search-build")).to_be_visible(timeout=30_000)
