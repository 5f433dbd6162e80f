"""Chapter 7's evaluation of the retriever-reader, on a QA set over the shipped glossary corpus.

assets/corpus/glossary_qa.jsonl holds questions written for the project whose answers are spans of
one glossary passage (`passage`: its title, the gold passage id). Three numbers, as the book reports:
- the retriever's recall@k as k grows: the share of questions whose gold passage is among the k
  passages closest to the question (cosine of the embedder's vectors, exact search);
- the reader on the gold passage alone: SQuAD exact match and token F1 (the reader's ceiling);
- end to end: the reader over the top-k retrieved passages (best span of the passages where it does
  not choose "no answer"), EM and F1 at a few k.
Model work comes in as functions, so this module never asks the hub; the budget is checked between
questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np

from backend.engines.qa import squad_metrics
from backend.runtime import budget

QA_FILE = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "glossary_qa.jsonl"
RECALL_K = (1, 2, 3, 5, 10, 20)
END_TO_END_K = (1, 3, 5)
ASK = "Evaluate again when the app is less busy."


def load_questions(path: Path = QA_FILE) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def recall_at_k(ranked: list[list[int]], gold: list[int], ks=RECALL_K) -> list[dict]:
    """[{k, recall}]: the share of questions whose gold passage index is in its first k ranked."""
    return [{"k": k, "recall": float(np.mean([g in r[:k] for r, g in zip(ranked, gold)])) if gold else 0.0}
            for k in ks]


def evaluate(passages: list[dict], questions: list[dict], embed: Callable[[list[str]], np.ndarray],
             read_one: Callable[[str, str], str], read_many: Callable[[str, list[dict]], str],
             ks=RECALL_K, end_to_end_k=END_TO_END_K, say: Callable[[float, str], None] | None = None) -> dict:
    """`embed(texts)` -> L2-normalised rows; `read_one(question, text)` -> the reader's answer ("" = none);
    `read_many(question, passages)` -> the answer over several passages. -> plain data (see module doc)."""
    titles = [p["title"] for p in passages]
    gold = [titles.index(q["passage"]) for q in questions]
    budget.check("embedding the corpus", ASK)
    vectors = embed([p["text"] for p in passages])
    budget.check("embedding the questions", ASK)
    queries = embed([q["question"] for q in questions])
    depth = max(max(ks), max(end_to_end_k))
    ranked = [list(np.argsort(-(vectors @ v), kind="stable")[:depth]) for v in queries]
    rows, e2e = [], {k: [] for k in end_to_end_k}
    for i, q in enumerate(questions):
        budget.check(f"read {i} of {len(questions)} questions", ASK)
        if say is not None:
            say(0.2 + 0.75 * i / len(questions), f"Reading: question {i + 1} of {len(questions)}")
        answers = q["answers"]["text"]
        on_gold = read_one(q["question"], passages[gold[i]]["text"])
        row = {"question": q["question"], "passage": q["passage"], "expected": answers[0],
               "rank_of_gold": ranked[i].index(gold[i]) + 1 if gold[i] in ranked[i] else None,
               "on_gold": on_gold, "on_gold_em": squad_metrics.score(answers, on_gold)[0],
               "on_gold_f1": squad_metrics.score(answers, on_gold)[1]}
        for k in end_to_end_k:
            got = read_many(q["question"], [passages[j] for j in ranked[i][:k]])
            em, f1 = squad_metrics.score(answers, got)
            e2e[k].append((em, f1))
            row[f"top{k}"] = got
        rows.append(row)
    n = len(questions)
    return {
        "questions": n, "passages": len(passages),
        "recall": recall_at_k(ranked, gold, ks),
        "reader_on_gold": {"exact": 100.0 * sum(r["on_gold_em"] for r in rows) / n,
                           "f1": 100.0 * sum(r["on_gold_f1"] for r in rows) / n},
        "end_to_end": [{"k": k, "exact": 100.0 * sum(e for e, _ in v) / n, "f1": 100.0 * sum(f for _, f in v) / n}
                       for k, v in e2e.items()],
        "rows": rows,
    }
