"""The QA set the project ships (assets/data/qa): exact offsets, no duplicates, counts, disjoint splits."""

from __future__ import annotations

import json

import pytest

from backend.engines.qa import data as qa_data


@pytest.fixture(scope="module")
def splits():
    return {s: qa_data.load(s) for s in qa_data.SPLITS}


def test_every_answer_is_its_context_slice(splits):
    for split in qa_data.SPLITS:
        with open(qa_data.DATA_DIR / f"{split}.jsonl", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                for text, start in zip(r["answers"]["text"], r["answers"]["answer_start"]):
                    assert r["context"][start:start + len(text)] == text, r["id"]
                    assert text == text.strip() and text, r["id"]


def test_a_bad_offset_is_refused():
    record = {"id": "x", "context": "The port was built in 1851.", "question": "When?",
              "answers": {"text": ["1851"], "answer_start": [3]}}
    with pytest.raises(ValueError, match="1851"):
        qa_data.parse(record)


def test_no_duplicates(splits):
    everything = [e for s in qa_data.SPLITS for e in splits[s]]
    assert len({e.id for e in everything}) == len(everything)
    assert len({(e.context, e.question) for e in everything}) == len(everything)
    for e in everything:  # one question is not asked twice of one context in other words either
        assert e.question.strip() and e.question.endswith(("?", ".")), e.id


def test_counts_and_share_of_unanswerable(splits):
    everything = [e for s in qa_data.SPLITS for e in splits[s]]
    assert len(everything) >= 700
    assert len(splits["validation"]) >= 90
    unanswerable = sum(not e.answerable for e in everything)
    assert unanswerable >= len(everything) / 4
    for s in qa_data.SPLITS:  # each split has both kinds
        assert any(e.answerable for e in splits[s]) and any(not e.answerable for e in splits[s])
    genres = {e.genre for e in everything}
    assert {"news", "science", "history", "sport", "how-to", "notice", "review"} <= genres
    assert sum(e.genre == "review" for e in everything) >= 100  # SubjQA-like opinions about products


def test_splits_share_no_context(splits):
    contexts = {s: {e.context for e in splits[s]} for s in qa_data.SPLITS}
    assert not contexts["train"] & contexts["validation"]


def test_the_glossary_questions_are_split_by_passage_and_cover_every_passage():
    glossary = {json.loads(line)["title"]: json.loads(line)["text"]
                for line in open(qa_data.GLOSSARY_DIR.parents[1] / "corpus" / "glossary.jsonl", encoding="utf-8")}
    splits = {s: qa_data.load(s, qa_data.GLOSSARY_DIR) for s in qa_data.GLOSSARY_SPLITS}  # parse checks offsets
    titles = {s: {e.title for e in rows} for s, rows in splits.items()}
    assert not titles["train"] & titles["validation"] and not titles["train"] & titles["test"]
    assert not titles["validation"] & titles["test"]
    assert set().union(*titles.values()) == set(glossary)
    everything = [e for rows in splits.values() for e in rows]
    assert all(glossary[e.title] == e.context for e in everything)
    assert len({e.id for e in everything}) == len(everything)
    assert len({(e.title, e.question.lower()) for e in everything}) == len(everything)
    assert len(everything) >= 1000 and len(splits["test"]) >= 200
    assert 0.08 < sum(not e.answerable for e in everything) / len(everything) < 0.15
