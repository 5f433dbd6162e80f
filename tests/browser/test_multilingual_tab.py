"""The Multilingual tab served alone: the default run's transfer table opens with no click, every
number as the built run has it, the plot with its "What to notice" line, and a German sentence
tagged by the model trained on all four languages."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import settled, shot
from tests.helpers.browser import new_page
from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def tab_url():
    from components.multilingual import ui
    from components.shell import figure_tools

    def build():
        figure_tools()
        ui.build()

    with served_tab(build, themed=True) as url:
        yield url


@pytest.fixture(scope="module")
def built():
    from backend import multilingual

    return multilingual.transfer()


def test_the_table_shows_the_built_runs_numbers(browser, tab_url, built):
    page = new_page(browser, viewport={"width": 1400, "height": 1100})
    try:
        page.goto(tab_url)
        table = page.locator("#ml-table")
        for row in built["table"]:
            expect(table).to_contain_text(row["trained_on"], timeout=60_000)
            for lang in built["languages"]:
                expect(table).to_contain_text(f"{row[lang]:.3f}")
        expect(page.locator("#ml-summary")).to_contain_text(built["frozen"])
        expect(page.locator("#ml-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
        expect(page.locator("#ml-errors")).to_contain_text("PER")
        page.locator("#ml-ner-go").click()
        expect(page.locator("#ml-ner-notice")).to_contain_text("finds:", timeout=120_000)
        shot(page, "multilingual-tab")
    finally:
        page.close()


def test_your_own_run_trains_live_and_the_default_run_comes_back(browser, tab_url, built):
    page = new_page(browser, viewport={"width": 1400, "height": 1100})
    try:
        page.goto(tab_url)
        expect(page.locator("#ml-table")).to_contain_text(built["table"][0]["trained_on"], timeout=60_000)
        steps = page.locator("#ml-live-steps input[type=number]")
        steps.fill("2")
        steps.press("Enter")
        page.locator("#ml-live-languages label", has_text="French").click()  # German (the default) and French
        page.locator("#ml-live-go").click()
        badge = page.locator("#ml-live-badge")
        expect(badge).to_contain_text("Your run: trained on German, French", timeout=180_000)
        expect(badge).to_contain_text("2 of 2 steps")
        expect(badge).to_contain_text("Frozen: the embeddings")
        expect(badge).to_contain_text("Show the transfer table")
        table = page.locator("#ml-table")
        expect(table).to_contain_text("your run: German, French")
        expect(table).not_to_contain_text("German only")
        expect(page.locator("#ml-plot .js-plotly-plot")).to_be_visible()
        settled(page)
        shot(page, "multilingual-your-run")
        page.locator("#ml-transfer-go").click()
        expect(table).to_contain_text("German only", timeout=60_000)
        expect(badge).not_to_contain_text("Your run")
    finally:
        page.close()
