"""The Why tab's hand-offs in the browser: a quick run, one tab on screen."""

from __future__ import annotations

from playwright.sync_api import expect


QUICK = ["occlusion", "gradient_x_input"]


def tick_only(page, methods: list[str]) -> None:
    """Tick only `methods` in the Why tab's settings (a quick run)."""
    page.locator("#why-panel").get_by_text("Methods and settings").click()
    for box in page.locator("#why-methods input[type=checkbox]").all():
        if box.is_checked() != (box.get_attribute("value") in methods):
            box.click()


def run_why(page) -> None:
    page.locator("#why-run").click()
    expect(page.locator("#why-summary")).to_contain_text("Most faithful here", timeout=240_000)
    expect(page.locator("#why-table")).to_be_visible()
