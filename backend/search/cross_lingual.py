"""The cross-lingual query set over the glossary, and recall@k of a ranking against it.

`assets/corpus/glossary_cross_lingual.jsonl` (data card beside it) holds German, French and
Italian questions, each answered by one English passage of the glossary (named by its title),
with the English question it was written from. Recall@k here is the share of questions whose
passage is among the top k: the measure of bench/cross_lingual_search.py and of the tab's claim
that a German question finds its English passage. Model-free: the caller ranks.
"""

from __future__ import annotations

import json
import os
from typing import Callable, Sequence

from backend.search.corpora import ASSETS_DIR

QUERIES_PATH = os.path.join(ASSETS_DIR, "corpus", "glossary_cross_lingual.jsonl")
LANGUAGES = ("de", "fr", "it")
KS = (1, 3, 5)


def load_queries(path: str = QUERIES_PATH) -> list[dict]:
    """-> [{"id", "lang", "question", "english", "passage"}, ...] in file order."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def recall_at(rows: Sequence[dict], rank: Callable[[str], list[str]], field: str = "question",
              ks: Sequence[int] = KS) -> dict:
    """Recall@k of `rank(text) -> titles best first` over `rows[i][field]` -> {"n", "recall@1", ...,
    "misses": [(id, the top title) for questions whose passage is not in the top max(ks)]}."""
    hits = {k: 0 for k in ks}
    misses = []
    for row in rows:
        titles = rank(row[field])
        for k in ks:
            hits[k] += row["passage"] in titles[:k]
        if row["passage"] not in titles[:max(ks)]:
            misses.append((row["id"], titles[0] if titles else ""))
    n = max(len(rows), 1)
    return {"n": len(rows), **{f"recall@{k}": hits[k] / n for k in ks}, "misses": misses}
