"""The Anatomy tab in headless Chromium: the plots render, the code is shown, an error is readable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import shot

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
    from tests.helpers.browser import open_raw_json, overflowing_tables

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


def _mask_zeros(page) -> tuple[int, int]:
    """(zeros, cells) of the mask heatmap the browser drew (its second trace)."""
    return tuple(page.evaluate("""() => {
        const z = document.querySelector('#anatomy-masks .js-plotly-plot').data[1].z.flat();
        return [z.filter(v => v === 0).length, z.length];
    }"""))


def _open_masks(page, ui):
    ui.get_by_role("button", name="Take it apart").click()
    page.locator("#anatomy-verdict").get_by_text(re.compile("every layer under")).wait_for(timeout=TIMEOUT)
    ui.get_by_role("tab", name="Masked attention").click()
    page.locator("#anatomy-masks .main-svg").first.wait_for(timeout=TIMEOUT)


def test_one_sentence_mask_has_a_legend_and_says_nothing_is_masked(tab):
    """The mask view says what is true for this input: its legend and caption say what its colours mean
    and how many positions are masked."""
    page, ui = tab, tab.ui
    _open_masks(page, ui)
    caption = page.locator("#anatomy-masks-caption")
    expect(caption).to_contain_text("query-key pairs masked")
    zeros, cells = _mask_zeros(page)
    assert zeros == 0 and cells > 0
    expect(caption).to_contain_text(f"0 of {cells} query-key pairs masked")
    expect(caption).to_contain_text("nothing to mask")
    legend = page.locator("#anatomy-masks .legend")
    expect(legend).to_contain_text("may attend")
    expect(legend).to_contain_text("masked")
    colours = page.evaluate("""() => [...document.querySelectorAll('#anatomy-masks .legend .traces')].map(
        t => [t.textContent.trim(), t.querySelector('.scatterpts, path.point').style.fill])""")
    assert len({fill for _, fill in colours}) == 2, colours  # two different colours, one per meaning
    page.locator("#anatomy-masks").scroll_into_view_if_needed()
    shot(page, "anatomy_mask_one_sentence")
    # With sentence B, the shorter sentence's padding keys are masked: the caption counts them.
    ui.get_by_label("Sentence B (optional: the encoder shows its padding mask)").fill(
        "a much longer second sentence that needs no padding at all here")
    _open_masks(page, ui)
    expect(caption).to_contain_text(re.compile(r"^\s*[1-9]\d* of \d+ query-key pairs masked"), timeout=TIMEOUT)
    zeros, cells = _mask_zeros(page)
    assert 0 < zeros < cells
    expect(caption).to_contain_text(f"{zeros} of {cells} query-key pairs masked")
    page.locator("#anatomy-masks").scroll_into_view_if_needed()
    shot(page, "anatomy_mask_padding")
