"""The Tokenizers and Anatomy tabs show only what is true for this input: no empty bytes column for
WordPiece, no "0.0 tokens per word" for an empty text, and a mask view whose legend and caption
say what its colours mean and how many positions are masked."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import press_again, shot

TAB = "tokenizers"  # its page holds this tab alone (tab_url, tests/conftest.py)

TIMEOUT = 120_000  # first use loads the models


def _headers(page, elem_id: str) -> list[str]:
    return [h.strip() for h in page.locator(f"#{elem_id} thead th").all_inner_texts() if h.strip()]


def _tokenizers(page, tab_url):
    # By its address, not a click: a click before the page's load event has answered can be undone
    # by it on a busy machine (CI saw the tab go back to Start after #tok-go showed).
    page.goto(tab_url + "?tab=tokenizers")
    expect(page.locator("#tok-go")).to_be_visible(timeout=60_000)


def test_wordpiece_has_no_bytes_column_and_an_empty_text_says_so(page, tab_url):
    _tokenizers(page, tab_url)
    page.locator("#tok-text textarea").fill("Unbelievably tokenizable 🤗")
    page.locator("#tok-go").click()
    expect(page.locator("#tok-dec")).to_contain_text("ðŁ", timeout=60_000)
    expect(page.locator("#tok-enc-summary")).to_contain_text("WordPiece works on characters, not bytes")
    expect(page.locator("#tok-enc-table")).to_contain_text("[CLS]")
    enc, dec = _headers(page, "tok-enc-table"), _headers(page, "tok-dec-table")
    assert "bytes" not in enc and "token" in enc, enc
    assert "bytes" in dec, dec
    expect(page.locator("#tok-dec-table")).to_contain_text("F0 9F")  # the decoder's bytes column has values
    assert "not bytes" not in page.locator("#tok-dec-summary").inner_text()
    shot(page, "tokenizers_no_bytes_column")
    page.locator("#tok-text textarea").fill("")
    press_again(page, "#tok-go")
    for summary in ("#tok-enc-summary", "#tok-dec-summary"):
        expect(page.locator(summary)).to_contain_text("the text is empty", timeout=60_000)
        assert "0.0" not in page.locator(summary).inner_text()
    expect(page.locator("#tok-enc-summary")).to_contain_text("only the special tokens")
    expect(page.locator("#tok-enc-table")).to_contain_text("[SEP]")
    shot(page, "tokenizers_empty_text")


def _anatomy(page, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile(r"^\W*Anatomy\W*$", re.I)).first.click()
    page.get_by_role("button", name="Take it apart").wait_for(timeout=30_000)
    return page.locator("#anatomy-panel")


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


def test_one_sentence_mask_has_a_legend_and_says_nothing_is_masked(page, app_url):
    ui = _anatomy(page, app_url)
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
