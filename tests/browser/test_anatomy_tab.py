"""The Anatomy tab in headless Chromium: the plots render, the code is shown, an error is readable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

TAB = "anatomy"  # its page holds this tab alone (tab_url, tests/conftest.py)

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
TIMEOUT = 120_000  # first use loads the models


def _shot(page, name: str, elem_id: str | None = None) -> None:
    """A screenshot, scrolled to `elem_id` (the plots sit below the inputs)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if elem_id:
        page.locator(f"#{elem_id}").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"anatomy_{name}.png"), full_page=False)


@pytest.fixture
def tab(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile(r"^\W*Anatomy\W*$", re.I)).first.click()
    page.get_by_role("button", name="Take it apart").wait_for(timeout=30_000)
    page.ui = page.locator("#anatomy-panel")
    return page


def _plot(page, elem_id: str) -> None:
    page.locator(f"#{elem_id} .main-svg").first.wait_for(timeout=TIMEOUT)


def _run(page) -> None:
    page.ui.get_by_role("button", name="Take it apart").click()


def test_encoder_plots_and_code(tab):
    page = tab
    page.ui.get_by_label("Sentence B (optional: the encoder shows its padding mask)").fill("fruit flies")
    _run(page)
    page.locator("#anatomy-verdict").get_by_text(re.compile("every layer under")).wait_for(timeout=TIMEOUT)
    assert "all-MiniLM-L6-v2" in page.locator("#anatomy-badge").inner_text()
    _plot(page, "anatomy-diffs")
    assert page.locator("#anatomy-diffs .bars path, #anatomy-diffs .point path").count() >= 7
    _shot(page, "encoder", "anatomy-diffs")
    page.ui.get_by_text("The code of each step (what ran)").click()
    code = page.locator("#anatomy-code")
    code.get_by_text("def attention_sublayer", exact=False).first.wait_for(timeout=TIMEOUT)
    for name, elem in (("Residual stream", "anatomy-stream"), ("Masked attention", "anatomy-masks"),
                       ("Parameter budget", "anatomy-budget")):
        page.ui.get_by_role("tab", name=name).click()
        _plot(page, elem)
        _shot(page, elem.replace("anatomy-", "encoder_"), elem)
    assert page.locator("#anatomy-masks .heatmaplayer, #anatomy-masks .hm").count() >= 1
    page.ui.get_by_role("tab", name="Sentence vector").click()
    page.locator("#anatomy-pooling").get_by_text(re.compile("384 dimensions")).wait_for(timeout=TIMEOUT)
    _shot(page, "encoder_pooling", "anatomy-pooling")


def test_decoder_logit_lens(tab):
    page = tab
    page.ui.get_by_label("Text (sentence A)").fill("The capital of France is")
    page.ui.get_by_label("decoder").check()
    _run(page)
    page.locator("#anatomy-verdict").get_by_text(re.compile("30 layers")).wait_for(timeout=TIMEOUT)
    page.ui.get_by_role("tab", name="Logit lens").click()
    _plot(page, "anatomy-lens")
    page.ui.get_by_text(re.compile("equals greedy decoding")).wait_for(timeout=TIMEOUT)
    assert "Paris" in page.locator("#anatomy-lens").inner_text()
    _shot(page, "logit_lens", "anatomy-lens")
    page.ui.get_by_role("tab", name="Masked attention").click()
    _plot(page, "anatomy-masks")
    _shot(page, "causal_mask", "anatomy-masks")


def test_error_is_readable(tab):
    page = tab
    page.ui.get_by_label("Text (sentence A)").fill("word " * 200)
    _run(page)
    page.locator("#anatomy-error").get_by_text(re.compile("at most 128")).wait_for(timeout=TIMEOUT)
    _shot(page, "over_cap")


def test_a_good_result_then_an_error_leaves_no_stale_result(tab):
    from tests.browser.conftest import open_raw_json, overflowing_tables

    page = tab
    _run(page)
    page.locator("#anatomy-verdict").get_by_text(re.compile("every layer under")).wait_for(timeout=TIMEOUT)
    _plot(page, "anatomy-diffs")
    assert open_raw_json(page, "#anatomy-panel") == 0  # the JSON is one click away, collapsed
    assert overflowing_tables(page, "#anatomy-panel") == []
    page.ui.get_by_label("Text (sentence A)").fill("word " * 200)
    _run(page)
    error = page.locator("#anatomy-error")
    error.get_by_text(re.compile("at most 128")).wait_for(timeout=TIMEOUT)
    assert error.is_visible()
    assert page.locator("#anatomy-verdict").inner_text().strip() == ""  # no stale verdict under the error
    assert page.locator("#anatomy-badge").inner_text().strip() == ""
    assert page.locator("#anatomy-diffs .main-svg").count() == 0
    _shot(page, "error_after_result", "anatomy-error")
    page.ui.get_by_label("Text (sentence A)").fill("time flies like an arrow")
    _run(page)
    page.locator("#anatomy-verdict").get_by_text(re.compile("every layer under")).wait_for(timeout=TIMEOUT)
    expect(error).to_be_hidden(timeout=10_000)  # a success hides the message again
