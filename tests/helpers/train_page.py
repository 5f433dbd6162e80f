"""The Train tab in the browser: open it, set its time budget."""

from __future__ import annotations

import re

from playwright.sync_api import expect



def open_tab(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile("^Train$")).first.click()
    expect(page.locator("#train-go")).to_be_visible(timeout=30_000)


def set_budget(page, elem_id, value, shows):
    """Type a budget value and wait until the estimate shows it. A value typed while the
    accordion is still rendering can be lost (seen once on a loaded box), so type it again."""
    box = page.locator(f"#{elem_id} input[type=number]")
    estimate = page.locator("#train-estimate")
    for _ in range(3):
        box.fill(str(value))
        box.press("Enter")
        try:
            expect(estimate).to_contain_text(shows, timeout=10_000)
            return
        except AssertionError:
            continue
    expect(estimate).to_contain_text(shows)
