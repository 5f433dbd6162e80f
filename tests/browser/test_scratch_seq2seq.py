"""The From scratch tab's tiny encoder-decoder in a browser: see the plan, train the default recipe,
watch the loss and the validation translations, read the held-out accuracy and its table, then
the cross-attention heatmap with token labels, the check, and bertviz's three kinds of attention.
The section is served alone (with the page's figure tools, for the "What to notice" lines)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.tab_app import served_tab

TIMEOUT = 240_000


def _build():
    from components.scratch import seq2seq as scratch_seq2seq
    from components.shell import figure_tools

    figure_tools()
    scratch_seq2seq.build()


@pytest.fixture(scope="module")
def s2s_url():
    with served_tab(_build, themed=True) as url:
        yield url


def test_train_then_see_accuracy_alignment_check_and_bertviz(page, s2s_url):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(s2s_url)
    expect(page.locator("#scratch-s2s-intro")).to_contain_text("cross-attention")
    expect(page.locator("#scratch-s2s-plan")).to_contain_text("it fits", timeout=30_000)
    page.locator("#scratch-s2s-go").click()
    expect(page.locator("#scratch-s2s-status")).to_contain_text("Held-out test", timeout=TIMEOUT)
    status = page.locator("#scratch-s2s-status").inner_text()
    m = re.search(r"Held-out test: (\d+) of 500 dates", status)
    assert m and int(m.group(1)) >= 400, status  # "translates most held-out items correctly"
    expect(page.locator("#scratch-s2s-loss .js-plotly-plot")).to_be_visible()
    expect(page.locator("#scratch-s2s-loss")).to_contain_text("validation exact match")
    expect(page.locator("#scratch-s2s-samples .s2s-sample").first).to_contain_text("step 400")
    expect(page.locator("#scratch-s2s-test")).to_contain_text("✓ yes")
    shot(page, "scratch_s2s_trained")
    # the example is translated once training ends: output, check, heatmaps with token labels
    expect(page.locator("#scratch-s2s-output")).to_contain_text("2004-03-23", timeout=60_000)
    expect(page.locator("#scratch-s2s-check")).to_contain_text("✅")
    cross = page.locator("#scratch-s2s-cross")
    expect(cross.locator(".js-plotly-plot")).to_be_visible()
    ticks = cross.locator(".xtick text, .ytick text").evaluate_all("els => els.map(e => e.textContent)")
    assert {"twenty", "third", "march", "thousand", "four", "2", "0", "-", "</s>"} <= set(ticks), ticks
    expect(cross).to_contain_text("What to notice")
    expect(cross).to_contain_text("the year digits 2 0 0 4 look most at")
    expect(page.locator("#scratch-s2s-encoder .js-plotly-plot")).to_be_visible()
    expect(page.locator("#scratch-s2s-decoder")).to_contain_text("causal mask")
    cross.scroll_into_view_if_needed()
    shot(page, "scratch_s2s_cross_attention")
    # another head: the check follows the shown head
    page.locator("#scratch-s2s-head input[type=number]").fill("2")
    page.locator("#scratch-s2s-head input[type=number]").press("Enter")
    expect(page.locator("#scratch-s2s-check")).to_contain_text("head 2", timeout=60_000)
    # bertviz's head view draws the three kinds (Cross first) with no network
    frame = page.frame_locator("#scratch-s2s-head-view iframe")
    expect(frame.locator("#filter option")).to_have_count(3, timeout=30_000)
    expect(frame.locator("#filter option").first).to_have_text("Cross (decoder -> encoder)")
    expect(frame.locator("svg text").first).to_be_visible(timeout=30_000)
    page.locator("#scratch-s2s-head-view").scroll_into_view_if_needed()
    shot(page, "scratch_s2s_head_view")
    page.locator("#scratch-s2s-download").click()
    expect(page.locator("#scratch-s2s-download-status")).to_contain_text("model.safetensors", timeout=60_000)
    assert not page.blocked_requests, page.blocked_requests


def test_an_unknown_word_is_named_and_translate_before_training_is_readable(page, s2s_url):
    page.goto(s2s_url)
    page.locator("#scratch-s2s-translate").click()
    expect(page.locator("#scratch-s2s-translate-error")).to_contain_text("No tiny encoder-decoder in this session",
                                                                       timeout=60_000)
