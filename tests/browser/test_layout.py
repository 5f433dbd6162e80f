"""What every visitor sees around the tabs: the tab row on a phone, the models panel."""

from __future__ import annotations

import re

from playwright.sync_api import expect

import app
from tests.helpers.browser import shot
from tests.helpers.browser import new_page
TAB = "attention"  # the page of its own-tab tests (tab_url, tests/conftest.py)

MAIN_TABS = ("Start",) + tuple(title for title, *_ in app.TABS)  # every tab there is, the Start page first


def _tab(page, name: str):
    return page.locator("#main-tabs").get_by_role("tab", name=re.compile(rf"^\W*{name}\W*$"))


def test_a_phone_shows_every_main_tab_label(browser, app_url):
    page = new_page(browser, viewport={"width": 420, "height": 900})  # waits for the page's own ready signal
    try:
        page.goto(app_url)
        for name in MAIN_TABS:
            tab = _tab(page, name)
            expect(tab).to_be_visible()
            box = tab.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 420 + 1, (name, box)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, f"the page scrolls sideways on a phone: {width}px"
        _tab(page, "Semantic search").click()
        expect(page.locator("#search-tab")).to_be_visible()
        shot(page, "layout_phone_tabs")
        assert page.blocked_requests == []
    finally:
        page.context.close()


def test_models_panel_follows_the_hub_without_refresh(page, tab_url):
    """Open the panel, use a model from a tab: the panel says it is loaded, no Refresh pressed."""
    page.goto(tab_url)
    page.locator("#status-panel").get_by_text("Models and device").click()
    table = page.locator("#status-table")
    expect(table).to_contain_text("encoder")
    _tab(page, "Attention").click()
    page.locator("#attention-tab").get_by_role("button", name="Show attention").click()
    expect(page.locator("#attention-badge")).to_contain_text("MiniLM", timeout=90_000)
    encoder_row = table.get_by_role("row").filter(has_text=re.compile(r"^\s*encoder\b")).first
    expect(encoder_row).to_contain_text("yes", timeout=15_000)
    shot(page, "layout_models_panel")
    assert not page.blocked_requests, page.blocked_requests
