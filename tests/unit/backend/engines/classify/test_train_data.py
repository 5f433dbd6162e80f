"""The labelled sets the project ships: counts per label, fixed splits, no sentence twice."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from backend.engines.classify.datasets import DATA_DIR, SPLITS, load_shipped

EXPECTED = {"emotion": ({"sadness", "joy", "love", "anger", "fear", "surprise"}, 100),
            "sentiment": ({"positive", "negative", "neutral"}, 150)}


def _rows(name):
    out = {}
    for split in SPLITS:
        lines = (DATA_DIR / name / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        out[split] = [json.loads(line) for line in lines]
    return out


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_line_is_one_text_and_one_known_label(name):
    labels, _ = EXPECTED[name]
    for split, rows in _rows(name).items():
        for row in rows:
            assert set(row) == {"text", "label"}, (split, row)
            assert row["label"] in labels
            assert row["text"] == row["text"].strip() and len(row["text"]) >= 10


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_per_label_and_split_proportions(name):
    labels, minimum = EXPECTED[name]
    rows = _rows(name)
    total = Counter(r["label"] for split in SPLITS for r in rows[split])
    assert set(total) == labels
    assert min(total.values()) >= minimum, total
    for label, n in total.items():
        per_split = {s: sum(r["label"] == label for r in rows[s]) for s in SPLITS}
        assert per_split["validation"] == per_split["test"] == round(n * 0.15), (label, per_split)
        assert per_split["train"] == n - 2 * round(n * 0.15)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_sentence_repeats_within_or_across_splits(name):
    seen: dict[str, str] = {}
    for split, rows in _rows(name).items():
        for r in rows:
            key = _norm(r["text"])
            assert key not in seen, f"{r['text']!r} in {split} repeats one in {seen.get(key)}"
            seen[key] = split


def test_the_two_sets_share_no_sentence():
    a = {_norm(r["text"]) for rows in _rows("emotion").values() for r in rows}
    b = {_norm(r["text"]) for rows in _rows("sentiment").values() for r in rows}
    assert a & b == set()


def test_loader_keeps_the_book_label_order_and_the_files_splits():
    ds = load_shipped("emotion")
    assert ds.labels == ["sadness", "joy", "love", "anger", "fear", "surprise"]
    assert (len(ds.train), len(ds.validation), len(ds.test)) == (440, 95, 95)
    first = json.loads((DATA_DIR / "emotion" / "train.jsonl").read_text().splitlines()[0])
    assert ds.train[0] == (first["text"], ds.labels.index(first["label"]))
