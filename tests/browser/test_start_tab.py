"""The Start tab on its own page (tab_url): the first hour's steps ticked as done stay ticked in this
browser (localStorage), across reloads."""

from __future__ import annotations

from playwright.sync_api import expect

from components.start import route

TAB = "start"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_steps_ticked_as_done_stay_ticked_in_this_browser(page, tab_url):
    page.goto(tab_url)
    boxes = page.locator(".tlab-start-done input")
    expect(boxes).to_have_count(len(route.STEPS), timeout=60_000)
    boxes.nth(0).check()
    boxes.nth(2).check()
    page.reload()
    boxes = page.locator(".tlab-start-done input")
    expect(boxes).to_have_count(len(route.STEPS), timeout=60_000)
    expect(boxes.nth(0)).to_be_checked()
    expect(boxes.nth(2)).to_be_checked()
    expect(boxes.nth(1)).not_to_be_checked()
    boxes.nth(0).uncheck()
    page.reload()
    expect(page.locator(".tlab-start-done input").nth(0)).not_to_be_checked(timeout=60_000)
    assert page.evaluate("localStorage.getItem('tlab-first-hour-done')") == '["attention"]'
