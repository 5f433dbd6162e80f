"""Chapter 7's retriever-reader evaluation (backend.search.reader_eval) with stand-in models, and its QA set."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.search import corpora, reader_eval

PASSAGES = [{"title": "A", "text": "Alpha was built in 1851."}, {"title": "B", "text": "Beta costs 2 euros."},
            {"title": "C", "text": "Gamma is blue."}]
QUESTIONS = [{"passage": "A", "question": "When was Alpha built?", "answers": {"text": ["1851"], "answer_start": [19]}},
             {"passage": "B", "question": "What does Beta cost?", "answers": {"text": ["2 euros"], "answer_start": [11]}}]


VECTORS = {"Alpha was built in 1851.": [1, 0, 0], "Beta costs 2 euros.": [0, 1, 0], "Gamma is blue.": [0, 0.6, 0.8],
           "When was Alpha built?": [0.9, 0.1, 0.1], "What does Beta cost?": [0, 0.5, 0.86]}  # Gamma first, then Beta


def _embed(texts):
    rows = np.array([VECTORS[t] for t in texts], dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _read_one(question, text):
    word = question.split()[-2] if question.startswith("When") else question.split()[2]
    return "1851" if word == "Alpha" and "1851" in text else "2 euros" if word == "Beta" and "2 euros" in text else ""


def test_recall_grows_with_k_and_end_to_end_follows_retrieval():
    out = reader_eval.evaluate(PASSAGES, QUESTIONS, _embed, _read_one,
                               lambda q, ps: next((a for a in (_read_one(q, p["text"]) for p in ps) if a), ""),
                               ks=(1, 2, 3), end_to_end_k=(1, 3))
    recall = {r["k"]: r["recall"] for r in out["recall"]}
    assert recall[1] == 0.5 and recall[2] == 1.0 and recall[3] == 1.0  # Beta's question ranks Gamma first
    assert out["reader_on_gold"] == {"exact": 100.0, "f1": 100.0}
    e2e = {r["k"]: r for r in out["end_to_end"]}
    assert e2e[1]["exact"] == 50.0 and e2e[3]["exact"] == 100.0
    assert [r["rank_of_gold"] for r in out["rows"]] == [1, 2]


def test_the_glossary_qa_set_answers_are_spans_of_their_gold_passage():
    texts = {json.loads(l)["title"]: json.loads(l)["text"] for l in open(corpora.GLOSSARY_PATH, encoding="utf-8")}
    questions = reader_eval.load_questions()
    assert len(questions) >= 30 and len({q["question"] for q in questions}) == len(questions)
    for q in questions:
        text, (a,), (s,) = texts[q["passage"]], q["answers"]["text"], q["answers"]["answer_start"]
        assert text[s:s + len(a)] == a, q["id"]


def test_recall_at_k_counts_the_gold_index():
    assert reader_eval.recall_at_k([[2, 0], [1, 0]], [0, 0], ks=(1, 2)) == [{"k": 1, "recall": 0.0},
                                                                         {"k": 2, "recall": 1.0}]
    with pytest.raises(ValueError):
        reader_eval.evaluate(PASSAGES, [{"passage": "Z", "question": "?", "answers": {"text": ["x"]}}], _embed,
                             _read_one, lambda q, ps: "")
