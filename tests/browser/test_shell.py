"""A person opens the app: five tabs, the tokenizer explorer works, nothing leaves localhost."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import press_again, shot

TAB = "tokenizers"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_tabs_present_and_tokenizer_explorer_shows_tokens(page, app_url):
    page.goto(app_url)  # the whole page: it checks every main tab is there
    for name in ("Pipelines", "Tokenizers", "Attention", "Decoding", "Semantic search"):
        expect(page.get_by_role("tab", name=re.compile(rf"^\W*{name}\W*$"))).to_be_visible()
    page.get_by_role("tab", name=re.compile(r"^\W*Tokenizers\W*$")).click()
    page.locator("#tok-text textarea").fill("Unbelievably tokenizable sentences")
    page.locator("#tok-go").click()
    expect(page.locator("#tok-enc")).to_contain_text("##", timeout=60_000)
    expect(page.locator("#tok-dec")).to_contain_text("izable", timeout=60_000)
    expect(page.locator("#tok-enc-summary")).to_contain_text("MiniLM")
    shot(page, "shell_tokenizer")
    assert not page.blocked_requests, page.blocked_requests


# ---------------------------------------------------------------- tokenizer explorer
def _chip_colours(page, elem_id: str) -> dict:
    """{'chips': [[text, background]...], 'legend': {label: background}} of one HighlightedText."""
    return page.evaluate(
        """(id) => {
            const root = document.querySelector('#' + id);
            const chips = [...root.querySelectorAll('.textfield .token')].map(
                t => [t.querySelector('.text').textContent, getComputedStyle(t).backgroundColor]);
            const legend = Object.fromEntries([...root.querySelectorAll('.legend .legend-item')].map(
                b => [b.textContent.trim(), getComputedStyle(b).backgroundColor]));
            return {chips, legend};
        }""",
        elem_id,
    )


def _tokenizers(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile(r"^\W*Tokenizers\W*$")).first.click()
    page.locator("#tok-go").wait_for()


def test_tokenizer_explains_byte_level_pieces_and_colours_every_label(page, tab_url):
    from tests.helpers.browser import open_raw_json, overflowing_tables

    _tokenizers(page, tab_url)
    expect(page.locator("#tok-byte-note")).to_contain_text("Byte-level BPE")
    page.locator("#tok-text textarea").fill("I 🤗 Bänke — ok")
    page.locator("#tok-go").click()
    expect(page.locator("#tok-dec")).to_contain_text("ðŁ", timeout=60_000)
    seen = _chip_colours(page, "tok-dec")
    legend = seen["legend"]
    assert set(legend) == {"word start", "word continuation", "special", "byte piece (part of a character)"}
    assert {bg for _, bg in seen["chips"]} <= set(legend.values())  # every colour used is in the legend
    colour = dict(seen["chips"])
    for piece in ("ĠðŁ", "¤", "Ĺ"):  # 🤗's four bytes, cut in three: byte pieces, not words
        assert colour[piece] == legend["byte piece (part of a character)"] != legend["word start"]
    assert open_raw_json(page, "body") == 0
    assert overflowing_tables(page, "body") == []
    shot(page, "tokenizers_bytes_raw")
    page.locator("#tok-bytes input").check()  # the toggle re-formats at once
    expect(page.locator("#tok-dec")).to_contain_text("[F0 9F]", timeout=60_000)
    chips = [text for text, _ in _chip_colours(page, "tok-dec")["chips"]]
    assert "ä" in chips and "[A4]" in chips and " —" in chips and "ĠâĢĶ" not in chips
    shot(page, "tokenizers_bytes_decoded")


def test_tokenizer_long_paragraph_scrolls_and_errors_clear_the_result(page, tab_url):
    _tokenizers(page, tab_url)
    paragraph = " ".join(["Transformers read tokens, not characters; a paragraph of this size makes"] * 40)
    page.locator("#tok-text textarea").fill(paragraph)
    page.locator("#tok-go").click()
    expect(page.locator("#tok-dec-summary")).to_contain_text("tokens", timeout=60_000)
    count = int(re.search(r"(\d+) tokens", page.locator("#tok-dec-summary").inner_text()).group(1))
    assert count >= 450
    box = page.evaluate("""() => { const b = document.querySelector('#tok-dec-box');
        return [b.getBoundingClientRect().height, b.scrollHeight, b.clientHeight]; }""")
    assert box[0] <= 360 and box[1] > box[2] + 500  # capped, and it scrolls
    shot(page, "tokenizers_long")
    page.locator("#tok-text textarea").fill("x" * 20_001)  # over TLAB_MAX_TOKENIZE_CHARS
    press_again(page, "#tok-go")
    expect(page.locator("#tok-error")).to_contain_text("at most 20,000", timeout=60_000)
    assert page.locator("#tok-dec-summary").inner_text().strip() == ""  # the old result is gone
    assert page.locator("#tok-dec .textfield .token").count() == 0
    shot(page, "tokenizers_error")
