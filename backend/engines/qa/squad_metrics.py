"""Exact match and token F1 as the official SQuAD 2.0 evaluation script defines them (chapter 7).

Both compare *normalised* answers: lower-cased, punctuation removed, the articles a/an/the
removed, whitespace collapsed. An unanswerable question has the empty string as its only gold
answer, so predicting "no answer" (the empty string) scores 1 on it and any span scores 0;
predicting "no answer" for an answerable question scores 0. A prediction is scored against
each gold answer and the best score is kept. Totals are split into has-answer and no-answer,
as the script's `HasAns_*` / `NoAns_*` keys are.
"""

from __future__ import annotations

import collections
import re
import string

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace (the script's order)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def get_tokens(s: str) -> list[str]:
    return normalize_answer(s).split() if s else []


def compute_exact(a_gold: str, a_pred: str) -> int:
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold: str, a_pred: str) -> float:
    gold, pred = get_tokens(a_gold), get_tokens(a_pred)
    if not gold or not pred:  # either is no-answer: F1 is 1 if both are, else 0
        return float(gold == pred)
    common = collections.Counter(gold) & collections.Counter(pred)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def gold_answers(answers: list[str]) -> list[str]:
    """The gold answers that count (the script drops those that normalise to nothing); [''] if none."""
    kept = [a for a in answers if normalize_answer(a)]
    return kept or [""]


def score(answers: list[str], prediction: str) -> tuple[int, float]:
    """(exact, F1) of one prediction ("" = no answer) against its gold answers (max over them)."""
    golds = gold_answers(answers)
    return max(compute_exact(g, prediction) for g in golds), max(compute_f1(g, prediction) for g in golds)


def evaluate(golds: list[list[str]], predictions: list[str]) -> dict:
    """Percentages as the script prints them: exact, f1, total, and HasAns_/NoAns_ splits."""
    if len(golds) != len(predictions):
        raise ValueError("one prediction per question")
    rows = []
    for answers, pred in zip(golds, predictions):
        em, f1 = score(answers, pred)
        rows.append((bool(gold_answers(answers)[0]), em, f1))

    def block(sel: list[tuple[bool, int, float]]) -> dict:
        n = len(sel)
        return {"exact": 100.0 * sum(r[1] for r in sel) / n if n else 0.0,
                "f1": 100.0 * sum(r[2] for r in sel) / n if n else 0.0, "total": n}

    out = block(rows)
    has, no = [r for r in rows if r[0]], [r for r in rows if not r[0]]
    if has:
        out.update({f"HasAns_{k}": v for k, v in block(has).items()})
    if no:
        out.update({f"NoAns_{k}": v for k, v in block(no).items()})
    return out


def lenient(answers: list[str], prediction: str) -> int:
    """1 where a person reading the answer would call it right though exact match may not (not part of the
    SQuAD script): on an answerable question, the prediction contains a gold answer or is contained in one
    (both normalised as above, neither empty), or its token F1 is at least 0.5; on an unanswerable question,
    only "no answer" ("") is right."""
    golds = [a for a in answers if normalize_answer(a)]
    if not golds:
        return int(prediction == "")
    pred = normalize_answer(prediction)
    if not pred:
        return 0
    if any(pred in normalize_answer(g) or normalize_answer(g) in pred for g in golds):
        return 1
    return int(max(compute_f1(g, prediction) for g in golds) >= 0.5)
