"""From scratch's chapter 11 parts in a browser: the scaling law measured on the tiny-GPT family (its
alpha, interval and both log-log plots with their What to notice lines), one added size placed against
the line, the cost of attention measured at 64 ... 512 tokens, and sparse and linear attention on the
encoder's own queries and keys. The tab is built into its own small Blocks app."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import settled, shot
from tests.helpers.tab_app import served_tab

TIMEOUT = 180_000


@pytest.fixture(scope="module")
def url():
    from components.scratch import ui as scratch
    from components.shell import figure_tools

    def build():  # the tab, and the page's figure tools (app.py places them once): the What to notice lines
        scratch.build()
        figure_tools()

    with served_tab(build, themed=True) as address:
        yield address


def test_the_scaling_law_and_an_added_size(page, url):
    page.goto(url)
    page.locator("#scaling-go").click()
    expect(page.locator("#scaling-summary")).to_contain_text(re.compile(r"alpha = 0\.\d{3}"), timeout=TIMEOUT)
    expect(page.locator("#scaling-summary")).to_contain_text("Kaplan's 0.076")
    expect(page.locator("#scaling-summary")).to_contain_text("Where toy scale departs")
    expect(page.locator("#scaling-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#scaling-compute .js-plotly-plot")).to_be_visible()
    expect(page.locator("#scaling-plot .tlab-notice")).to_contain_text("What to notice: the 5 sizes span 62.1x")
    expect(page.locator("#scaling-compute .tlab-notice")).to_contain_text("frontier passes")
    expect(page.locator("#scaling-runs")).to_contain_text("4 x 128")
    settled(page)
    page.locator("#scaling-layers input[type=number]").fill("1")
    page.locator("#scaling-layers input[type=number]").press("Enter")
    page.locator("#scaling-add").click()
    expect(page.locator("#scaling-placed")).to_contain_text(re.compile(r"landed \*?\*?(inside|outside)|landed"),
                                                           timeout=TIMEOUT)
    expect(page.locator("#scaling-placed")).to_contain_text("prediction interval")
    expect(page.locator("#scaling-plot .tlab-notice")).to_contain_text("your 1x64 landed")
    shot(page, "scratch-scaling")


def test_the_cost_of_attention_and_sparse_attention_on_the_encoder(page, url):
    page.goto(url)
    page.locator("#cost-go").click()
    expect(page.locator("#cost-summary")).to_contain_text("T² term", timeout=TIMEOUT)
    expect(page.locator("#cost-time .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#cost-time .tlab-notice")).to_contain_text("doubling the text")
    expect(page.locator("#cost-memory .tlab-notice")).to_contain_text("no T x T matrix kept")
    expect(page.locator("#cost-table")).to_contain_text("fused kernel")
    page.locator("#sparse-go").click()
    expect(page.locator("#sparse-summary")).to_contain_text("Relative error", timeout=TIMEOUT)
    expect(page.locator("#sparse-patterns .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#sparse-errors .tlab-notice")).to_contain_text("averaged over every head")
    expect(page.locator("#sparse-pairs")).to_contain_text("block-sparse")
    expect(page.locator("#future-unavailable")).to_contain_text("TAPAS")
    shot(page, "scratch-attention-cost")
