"""The Pipelines tab in the browser: open it, open one of its sub-tabs."""

from __future__ import annotations

import re

from playwright.sync_api import expect



def open_subtab(page, tab_url, tab):
    open_pipelines(page, tab_url)
    page.get_by_role("tab", name=tab, exact=True).click()


def open_pipelines(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    expect(page.locator("#pl-classify-run")).to_be_visible(timeout=30_000)
