"""The shipped NER set (assets/data/ner): valid BIO lines, fixed splits, unseen test names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

NER_DIR = Path(__file__).resolve().parents[5] / "assets" / "data" / "ner"
SPLITS = ("train", "validation", "test")
TYPES = ("PER", "ORG", "LOC", "MISC")
TAGS = {"O"} | {f"{p}-{t}" for t in TYPES for p in "BI"}
# What the files hold now (792 / 105 / 105), with room to add a few lines to one split.
SIZES = {"train": (780, 840), "validation": (100, 130), "test": (100, 130)}


def _rows(split: str) -> list[dict]:
    lines = (NER_DIR / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def rows() -> dict[str, list[dict]]:
    return {split: _rows(split) for split in SPLITS}


def _entities(row: dict) -> list[tuple[str, str]]:
    """(type, surface) for each B-X I-X... run, surface = its tokens joined by spaces."""
    out, current = [], None
    for token, tag in zip(row["tokens"], row["tags"]):
        if tag.startswith("I-"):
            current[1].append(token)
            continue
        if current:
            out.append(current)
        current = [tag[2:], [token]] if tag.startswith("B-") else None
    if current:
        out.append(current)
    return [(kind, " ".join(words)) for kind, words in out]


def test_every_line_is_tokens_and_tags_of_the_same_length(rows):
    for split in SPLITS:
        assert rows[split], split
        for row in rows[split]:
            assert set(row) == {"tokens", "tags"}, (split, row)
            assert isinstance(row["tokens"], list) and isinstance(row["tags"], list)
            assert len(row["tokens"]) == len(row["tags"]) > 0, (split, row)


def test_tokens_are_non_empty_words_without_whitespace(rows):
    for split in SPLITS:
        for row in rows[split]:
            for token in row["tokens"]:
                assert isinstance(token, str) and token, (split, row["tokens"])
                assert token == "".join(token.split()), (split, token)


def test_tags_are_the_nine_conll_bio_tags_and_every_i_continues_its_b(rows):
    for split in SPLITS:
        for row in rows[split]:
            previous = "O"
            for tag in row["tags"]:
                assert tag in TAGS, (split, tag)
                if tag.startswith("I-"):
                    assert previous in (f"B-{tag[2:]}", tag), (split, row["tokens"], row["tags"])
                previous = tag


def test_no_sentence_repeats_within_or_across_splits(rows):
    seen: dict[str, str] = {}
    for split in SPLITS:
        for row in rows[split]:
            key = " ".join(row["tokens"]).lower()
            assert key not in seen, f"{key!r} in {split} repeats one in {seen.get(key)}"
            seen[key] = split


def test_split_sizes(rows):
    for split, (low, high) in SIZES.items():
        assert low <= len(rows[split]) <= high, (split, len(rows[split]))


def test_every_type_is_well_represented_in_train_and_test(rows):
    for split, minimum in (("train", 40), ("test", 10)):
        counts = Counter(kind for row in rows[split] for kind, _ in _entities(row))
        for kind in TYPES:
            assert counts[kind] >= minimum, (split, counts)


def test_most_test_entities_are_names_never_seen_in_train(rows):
    train = {surface.lower() for row in rows["train"] for _, surface in _entities(row)}
    test = {surface.lower() for row in rows["test"] for _, surface in _entities(row)}
    unseen = test - train
    assert len(unseen) >= len(test) / 2, f"only {len(unseen)} of {len(test)} test entities unseen"


def test_some_sentences_have_no_entity_at_all(rows):
    for split in SPLITS:
        empty = sum(1 for row in rows[split] if set(row["tags"]) == {"O"})
        assert empty >= 0.05 * len(rows[split]), (split, empty)
