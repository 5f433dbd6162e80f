"""The tokenizer explorer shows only what is true for each tokenizer: no empty "bytes" column for
WordPiece (it works on characters), and no "0.0 tokens per word" for a text without words."""

from __future__ import annotations

import pytest

import components.tokenizers.ui as tab
from backend.tokenizers.api import explore
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer

MODEL = {"checkpoint": "x", "source": "test", "role": "encoder", "method": "m"}


@pytest.fixture(scope="module")
def wordpiece():
    return minilm_tokenizer()


@pytest.fixture(scope="module")
def bpe():
    return smollm2_tokenizer()


def _shown(result):
    result = {**result, "model": MODEL}
    return tab._summary("Encoder", result), tab._table(result)


def test_wordpiece_table_has_no_bytes_column_and_says_why_once(wordpiece):
    r = explore("Tokenizing text is fun", wordpiece)
    assert "bytes" not in r["columns"] and r["byte_level"] is False
    summary, table = _shown(r)
    assert table["value"]["headers"] == ["#", "token", "text", "id", "chars", "special"]
    assert all(len(row) == 6 for row in table["value"]["data"])
    assert len(table["column_widths"]) == 6
    assert summary.count("WordPiece works on characters, not bytes") == 1


def test_byte_level_table_keeps_its_bytes_column_with_values(bpe):
    r = explore("I 🤗 Bänke", bpe)
    assert "bytes" in r["columns"]
    summary, table = _shown(r)
    assert table["value"]["headers"] == tab.HEADERS and len(table["column_widths"]) == len(tab.HEADERS)
    byte_cells = [row[3] for row in table["value"]["data"]]
    assert all(byte_cells) and "F0 9F" in " ".join(byte_cells)  # every piece has its bytes
    assert "not bytes" not in summary


@pytest.mark.parametrize("text", ["", "   \n "])
def test_a_text_without_words_says_so_instead_of_zero_figures(wordpiece, bpe, text):
    for tok in (wordpiece, bpe):
        r = explore(text, tok)
        assert r["words"] == 0 and r["tokens_per_word"] is None and r["empty"] is True
        summary, _ = _shown(r)
        assert "0.0" not in summary and "tokens per word" in summary
        assert "the text is empty" in summary
    r = explore(text, wordpiece)
    assert [t["token"] for t in r["tokens"]] == ["[CLS]", "[SEP]"]
    assert "only the special tokens" in _shown(r)[0]
    assert "only the special tokens" not in _shown(explore(text, wordpiece, add_special_tokens=False))[0]


def test_a_text_with_words_still_shows_its_ratio(wordpiece):
    r = explore("Unbelievably tokenizable", wordpiece)
    assert r["tokens_per_word"] == pytest.approx(len([t for t in r["tokens"] if not t["special"]]) / 2, abs=1e-3)
    assert f"{r['tokens_per_word']} tokens per word" in _shown(r)[0]


def test_a_long_text_shows_its_first_tokens_and_says_the_raw_result_has_all(wordpiece):
    r = explore("tokenizers split unusual words " * 400, wordpiece)  # ~2,000 tokens
    assert len(r["tokens"]) > tab.SHOWN
    summary, table = _shown(r)
    chips = tab._pieces(r, False)
    assert len(chips) == len(table["value"]["data"]) == tab.SHOWN
    assert [row[0] for row in table["value"]["data"]] == [t["index"] for t in r["tokens"][:tab.SHOWN]]
    assert f"the first 1,000 of {len(r['tokens']):,} tokens" in summary and "raw result" in summary
    short, _ = _shown(explore("Tokenizing text is fun", wordpiece))
    assert "the first" not in short
