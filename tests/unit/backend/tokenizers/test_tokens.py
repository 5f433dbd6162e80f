"""Tokenizer explorer on tricky text with the real WordPiece and BPE tokenizers."""

from __future__ import annotations

import pytest

from backend.runtime.errors import InputError
from backend.tokenizers.api import explore
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer


@pytest.fixture(scope="module", params=["wordpiece", "bpe"])
def tok(request):
    return minilm_tokenizer() if request.param == "wordpiece" else smollm2_tokenizer()


@pytest.mark.parametrize("text", ["Tokenizing text is a core task of NLP.", "Café naïve résumé", "I 🤗 transformers!!", "a\tb\nc  d"])
def test_offsets_point_at_the_original_characters(tok, text):
    r = explore(text, tok)
    assert r["count"] == len(r["ids"]) == len(r["tokens"])
    for row in r["tokens"]:
        if not row["special"]:
            assert row["text"] == text[row["start"] : row["end"]]
            assert 0 <= row["start"] <= row["end"] <= len(text)
    assert r["ids"] == tok(text)["input_ids"]


def test_wordpiece_marks_subwords_and_special_tokens():
    r = explore("Tokenizing text", minilm_tokenizer())
    tokens = [t["token"] for t in r["tokens"]]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and r["special_count"] == 2
    assert any(t["continuation"] and t["token"].startswith("##") for t in r["tokens"])
    assert r["algorithm"] == "WordPiece"
    assert explore("Tokenizing text", minilm_tokenizer(), add_special_tokens=False)["special_count"] == 0


def test_bpe_splits_and_marks_leading_space():
    r = explore("Tokenizing text", smollm2_tokenizer())
    assert [t["token"] for t in r["tokens"]] == ["Token", "izing", "Ġtext"]
    assert [t["continuation"] for t in r["tokens"]] == [False, True, False]
    assert r["algorithm"].startswith("BPE")


def test_empty_text_gives_only_special_tokens():
    r = explore("", minilm_tokenizer())
    assert [t["token"] for t in r["tokens"]] == ["[CLS]", "[SEP]"] and r["words"] == 0
    assert explore("", smollm2_tokenizer())["count"] == 0


def test_huge_text_is_refused_quickly_with_a_clear_limit():
    asked = []

    def tokenizer(*args, **kwargs):  # refused before any tokenizing: the tokenizer is never called
        asked.append(args)
        return minilm_tokenizer()(*args, **kwargs)

    with pytest.raises(InputError, match="at most 20,000"):
        explore("x" * 100_000, tokenizer)
    assert asked == []


def test_wrong_type_is_refused():
    with pytest.raises(InputError, match="must be text"):
        explore(123, minilm_tokenizer())


def test_byte_level_pieces_decode_to_their_bytes():
    """`Ã¤`, `ĠâĢĶ`, `ðŁ` are bytes shown as characters: each row says which bytes and what they read as."""
    r = explore("Bänke — 🤗", smollm2_tokenizer())
    assert r["byte_level"] is True
    rows = {row["token"]: row for row in r["tokens"]}
    assert rows["Ã¤"]["bytes"] == "C3 A4" and rows["Ã¤"]["decoded"] == "ä" and not rows["Ã¤"]["byte_fragment"]
    assert rows["ĠâĢĶ"]["bytes"] == "20 E2 80 94" and rows["ĠâĢĶ"]["decoded"] == " —"
    pieces = [row for row in r["tokens"] if row["byte_fragment"]]
    assert [p["bytes"] for p in pieces] == ["20 F0 9F", "A4", "97"]  # 🤗 = F0 9F A4 97, cut in three
    assert [p["decoded"] for p in pieces] == [" [F0 9F]", "[A4]", "[97]"]
    assert b"".join(bytes.fromhex(row["bytes"]) for row in r["tokens"]).decode() == "Bänke — 🤗"


def test_wordpiece_has_no_byte_fields():
    r = explore("Bänke 🤗", minilm_tokenizer())
    assert r["byte_level"] is False and all("bytes" not in row for row in r["tokens"])


def test_tab_labels_byte_pieces_and_every_label_has_a_colour():
    from components.tokenizers import ui as tab

    r = explore("I 🤗 Bänke", smollm2_tokenizer())
    labels = {label for _, label in tab._pieces(r, show_bytes=False)}
    assert tab.BYTES in labels and labels <= set(tab.COLORS)
    assert all(label != tab.WORD for (_, label), row in zip(tab._pieces(r, False), r["tokens"]) if row["byte_fragment"])
    assert [chip for chip, _ in tab._pieces(r, show_bytes=False)] == ["I", "ĠðŁ", "¤", "Ĺ", "ĠB", "Ã¤", "n", "ke"]
    assert [chip for chip, _ in tab._pieces(r, show_bytes=True)] == ["I", " [F0 9F]", "[A4]", "[97]", " B", "ä", "n", "ke"]
