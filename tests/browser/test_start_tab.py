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


def test_each_steps_reveal_and_open_look_like_buttons_on_their_card(page, tab_url):
    """They took the card's own grey and no border, and read as plain text."""
    page.goto(tab_url)
    page.locator("#start-reveal-1").wait_for(timeout=60_000)
    for button in ("#start-reveal-1", "#start-open-1"):
        look = page.evaluate("""(sel) => {
            const b = document.querySelector(sel), card = b.closest('.start-step');
            const s = getComputedStyle(b);
            return {border: parseFloat(s.borderTopWidth), style: s.borderTopStyle, bg: s.backgroundColor,
                    card: getComputedStyle(card).backgroundColor};
        }""", button)
        assert look["border"] >= 1 and look["style"] == "solid" and look["bg"] != look["card"], (button, look)
