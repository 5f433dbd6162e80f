"""The QA check sets (tests/data/qa/*.jsonl, their card beside them) and how an answer is graded against one.

    from tests.helpers.qa_sets import grade, load
    for context, question, expected in load("held_out_4"): ...

`expected` is None where the text does not say; otherwise an exact substring of its context (checked on load).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "qa"
SETS = ("tuning", "held_out", "held_out_2", "held_out_3", "held_out_4", "held_out_5", "held_out_6")


@cache
def _rows(name: str) -> tuple[dict, ...]:
    if name not in SETS:
        raise KeyError(f"no QA check set {name!r}: one of {', '.join(SETS)}")
    with open(DATA / f"{name}.jsonl", encoding="utf-8") as f:
        rows = tuple(json.loads(line) for line in f if line.strip())
    for row in rows:  # every expected answer is its context's own text
        assert row["answer"] is None or row["answer"] in row["context"], (name, row["question"], row["answer"])
    return rows


def load(name: str) -> list[tuple[str, str, str | None]]:
    """The set's cases in file order: (context, question, expected answer or None)."""
    return [(r["context"], r["question"], r["answer"]) for r in _rows(name)]


def genres(name: str) -> list[str | None]:
    """Each case's genre ("news", "everyday notices", ...), where the set names one; None elsewhere."""
    return [r.get("genre") for r in _rows(name)]


def grade(context: str, expected: str | None, result: dict) -> dict:
    """exact / overlap / token F1 of the best answer against the expected span; refusals."""
    best = None if result["no_answer"] or not result["answers"] else result["answers"][0]
    if expected is None:
        return {"answerable": False, "refused": best is None}
    if best is None:
        return {"answerable": True, "exact": False, "overlap": False, "f1": 0.0, "refused": True}
    s = context.index(expected)
    e = s + len(expected)
    got, want = best["answer"].lower().split(), expected.lower().split()
    common = sum(min(got.count(w), want.count(w)) for w in set(got))
    f1 = 0.0 if not common else 2 * common / (len(got) + len(want))
    return {"answerable": True, "exact": best["answer"].lower() == expected.lower(),
            "overlap": best["start"] < e and s < best["end"], "f1": f1, "refused": False}
