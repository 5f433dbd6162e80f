"""The shipped multilingual NER set: the files are what the generator makes, tags are BIO over
PER/ORG/LOC, every language has a few hundred sentences, and no test sentence is in training."""

from __future__ import annotations

import json

import pytest

from backend.engines.ner import data as ner_data, languages as nl


def rows(name: str) -> list[dict]:
    return [json.loads(l) for l in (nl.DATA_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_files_are_what_the_generator_makes():
    made = nl.make()
    assert sorted(made) == sorted(f"{s}-{l}" for l in nl.LANGUAGES for s in nl.SPLITS)
    for name, expected in made.items():
        assert rows(name) == expected, name


@pytest.mark.parametrize("lang", nl.LANGUAGES)
def test_each_language_is_tagged_bio_with_the_three_types(lang):
    total = 0
    for split in nl.SPLITS:
        sentences = nl.load(lang, split)
        total += len(sentences)
        assert set(ner_data.labels_of(sentences)) <= set(nl.labels())
        for s in sentences:
            for prev, tag in zip(["O"] + s.tags, s.tags):  # an I- continues an entity of its own type
                assert not tag.startswith("I-") or prev[2:] == tag[2:], s.tokens
        types = {t[2:] for s in sentences for t in s.tags if t != "O"}
        assert types == set(nl.TYPES), (lang, split)
    assert total >= 300


@pytest.mark.parametrize("lang", nl.LANGUAGES)
def test_test_sentences_are_hand_written_and_never_trained_on(lang):
    test = rows(f"test-{lang}")
    assert len(test) >= 40 and {r["source"] for r in test} == {"hand-written"}
    seen = {tuple(r["tokens"]) for other in nl.LANGUAGES for split in ("train", "validation")
            for r in rows(f"{split}-{other}")}
    assert [r["tokens"] for r in test if tuple(r["tokens"]) in seen] == []
    validation = {tuple(r["tokens"]) for r in rows(f"validation-{lang}")}
    assert not validation & {tuple(r["tokens"]) for r in rows(f"train-{lang}")}


def test_brackets_become_bio_tags():
    assert nl.parse_bracketed("[PER Angela Merkel] besuchte [LOC Rom] .") == (
        ["Angela", "Merkel", "besuchte", "Rom", "."], ["B-PER", "I-PER", "O", "B-LOC", "O"])
    for bad in ("[PER Angela Merkel besuchte", "[PER [LOC Rom] ]", "Rom]"):
        with pytest.raises(ValueError):
            nl.parse_bracketed(bad)
