"""Decoding tab in headless Chromium: greedy and beam runs show text, step table and plots."""

from __future__ import annotations

import re

from playwright.sync_api import expect

try:
    from tests.browser.conftest import shot
except ImportError:  # the helper lives with the lead's fixtures; keep the test runnable
    def shot(page, name):
        import os
        os.makedirs("tests/artifacts", exist_ok=True)
        page.screenshot(path=f"tests/artifacts/{name}.png", full_page=True)


def open_tab(page, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile("decoding", re.I)).first.click()
    expect(page.locator("#decoding-run")).to_be_visible(timeout=30_000)


def pick_preset(page, name):
    page.locator("#decoding-preset input").click()
    page.get_by_role("option", name=name).click()


def pick_strategy(page, name):
    page.locator("#decoding-strategy").get_by_text(name, exact=True).click()


def test_greedy_then_beam_show_text_table_and_plots(page, app_url):
    open_tab(page, app_url)
    pick_preset(page, "Transformers are the… (greedy, 8 steps)")
    expect(page.locator("#decoding-prompt textarea")).to_have_value("Transformers are the")
    page.locator("#decoding-run").click()

    stats = page.locator("#decoding-stats")
    expect(stats).to_contain_text("sequence log-prob", timeout=120_000)
    expect(stats).to_contain_text("greedy")
    text = page.locator("#decoding-text textarea")
    assert text.input_value().strip()
    steps = page.locator("#decoding-steps")
    expect(steps).to_contain_text("top candidates")
    expect(steps).to_contain_text("␣")  # chosen tokens and candidates, spaces shown as ␣
    assert steps.locator("tbody tr").count() >= 1
    expect(page.locator("#decoding-temp-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#decoding-cum-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#decoding-temp-plot")).to_contain_text("T = 0.5")
    expect(page.locator("#decoding-cum-plot")).to_contain_text("survive")
    expect(page.locator("#decoding-badge")).to_contain_text("SmolLM2")
    shot(page, "decoding_greedy")

    pick_strategy(page, "beam")
    page.locator("#decoding-run").click()
    expect(stats).to_contain_text("beam 4", timeout=120_000)
    tree = page.locator("#decoding-tree-plot")
    expect(tree.locator(".js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(tree).to_contain_text("kept (a running beam)")
    expect(tree).to_contain_text("pruned")
    expect(tree).to_contain_text("best output")
    shot(page, "decoding_beam_tree")
    assert not getattr(page, "blocked_requests", [])


def test_zero_temperature_sampling_shows_readable_error(page, app_url):
    open_tab(page, app_url)
    pick_strategy(page, "sample")
    box = page.locator("#decoding-temperature input[type=number]")
    box.fill("0")
    box.press("Enter")
    page.locator("#decoding-run").click()
    err = page.get_by_text(re.compile("temperature must be > 0"))
    expect(err.first).to_be_visible(timeout=60_000)
    expect(page.get_by_text(re.compile("greedy' strategy")).first).to_be_visible()
    assert "Traceback" not in page.content()
    shot(page, "decoding_bad_temperature")
