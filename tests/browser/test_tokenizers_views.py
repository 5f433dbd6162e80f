"""The Tokenizers tab shows only what is true for this input: no empty bytes column for WordPiece, no
"0.0 tokens per word" for an empty text. (The Anatomy tab's mask view, whose legend and caption say what
its colours mean and how many positions are masked, is checked on its own page:
tests/browser/test_anatomy_tab.py.)"""

from __future__ import annotations


from playwright.sync_api import expect

from tests.helpers.browser import press_again, shot

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

