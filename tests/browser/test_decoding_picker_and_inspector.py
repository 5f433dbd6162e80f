"""The Decoding tab on its own page (tab_url): the presets say what they are before they are opened, a
comparison needs no JSON (ticking strategies in the picker writes it, a quick second tick included:
the picker's event runs `always_last`, Gradio's default `once` for `input` dropped a tick made while the
first was on its way), and the inspector follows its number box as it is typed in, with no title
running into its plot's axes."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.decoding_page import open_tab, set_number
from tests.helpers.figure_boxes import OVERLAPS

TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_decoding_presets_picker_and_inspector(page, tab_url):
    open_tab(page, tab_url)
    expect(page.locator("#decoding-preset input")).to_have_value(re.compile("Choose one of the book's examples"))
    page.locator("#decoding-compare").get_by_text("Compare 2-4 strategies").click()
    picker = page.locator("#decoding-compare-pick")
    picker.get_by_label("sample, top-p 0.9 (seed 42)").uncheck()
    picker.get_by_label("sample, T = 0.7 (seed 42)").check()
    code = page.locator("#decoding-strategies .cm-content")
    expect(code).to_contain_text('"temperature": 0.7')
    expect(code).not_to_contain_text('"top_p"')
    page.locator("#decoding-compare").get_by_text("Compare 2-4 strategies").click()  # closed again

    set_number(page, "decoding-max-new", 4)
    page.locator("#decoding-run").click()
    expect(page.locator("#decoding-stats")).to_contain_text(re.compile(r"sequence log-prob"), timeout=240_000)
    temp = page.locator("#decoding-temp-plot")
    expect(temp.locator(".tlab-notice")).to_contain_text("flattens the distribution", timeout=60_000)
    box = page.locator("#decoding-step input[type=number]")
    box.click()
    box.press("Control+A")
    box.type("2")  # no blur: the plot follows the box as it is typed in
    expect(temp.locator(".gtitle")).to_contain_text("before generated token #2", timeout=60_000)
    assert page.evaluate("document.activeElement.type") == "number"  # still typing in the box
    assert page.evaluate(OVERLAPS, "#decoding-tab") == []
    shot(page, "decoding_picker_inspector")
