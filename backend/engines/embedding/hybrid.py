"""Hybrid retrieval (the book's chapter 7 shows both retrievers): the dense retriever's top candidates re-ranked
by fusing their dense scores with BM25 scores over the passages' title and text.

BM25 (Okapi BM25, the `rank_bm25` package) is the sparse retriever the book's pipeline starts with: a passage
scores by the question's words it contains, each weighted by how rare the word is in the corpus (IDF), with
diminishing returns for repeats and a discount for long passages. It catches exact terms ("int8", "WordPiece")
that a small embedder blurs; the dense retriever catches paraphrases. Words are lower-cased, stop words dropped
and stemmed (NLTK's Snowball stemmer: "quantized" and "quantization" share "quantiz").

Fusion (`fuse`), over the dense retriever's first CANDIDATES passages only:
- "weighted": alpha x the dense score + (1 - alpha) x the BM25 score, each min-max normalised over the
  candidates (so the two scales meet at 0..1);
- "rrf" (reciprocal rank fusion): 1 / (c + dense rank) + 1 / (c + BM25 rank), ranks among the candidates.
The setting is chosen on the glossary QA validation split (bench/glossary_retrieval.py) and kept in SETTING.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

CANDIDATES = 20  # the dense retriever's top passages the fusion re-ranks
SETTING = {"method": "weighted", "alpha": 0.1}  # chosen on validation (bench/glossary_retrieval.py)
_STOP = frozenset("""a an the of to in on for and or is are was were be been being by with as at from that this
these those it its which what who whom whose how why when where many much does do did has have had not no can could
will would should there their than then into about such per one also other some any each i you we they he she
""".split())


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


def words(text: str) -> list[str]:
    """BM25's terms: lower-cased words and numbers (hyphens and dots inside kept: "int8", "gpt-2"), stop words
    dropped, stemmed."""
    stem = _stemmer().stem
    return [stem(w) for w in re.findall(r"[a-z0-9]+(?:[-.][a-z0-9]+)*", text.lower()) if w not in _STOP]


class Bm25:
    """Okapi BM25 (rank_bm25.BM25Okapi, its defaults k1=1.5, b=0.75) over `docs` (title and text joined)."""

    def __init__(self, docs: list[str]):
        from rank_bm25 import BM25Okapi

        self.size = len(docs)
        self.index = BM25Okapi([words(d) or ["\0"] for d in docs]) if docs else None

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per document (0 where it shares no term with the query)."""
        if self.index is None:
            return np.zeros(0)
        terms = words(query)
        return np.asarray(self.index.get_scores(terms), dtype=np.float64) if terms else np.zeros(self.size)


def _minmax(x: np.ndarray) -> np.ndarray:
    span = float(x.max() - x.min()) if len(x) else 0.0
    return (x - x.min()) / span if span > 0 else np.zeros_like(x)


def _ranks(x: np.ndarray) -> np.ndarray:
    """1 for the largest, ties broken by position (the earlier dense candidate first)."""
    order = np.argsort(-x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    return ranks


def fuse(dense: np.ndarray, sparse: np.ndarray, setting: dict | None = None) -> np.ndarray:
    """Fused scores of the candidates (in the dense retriever's order), from their dense and BM25 scores."""
    setting = setting or SETTING
    dense, sparse = np.asarray(dense, dtype=np.float64), np.asarray(sparse, dtype=np.float64)
    if setting["method"] == "rrf":
        c = float(setting["c"])
        return 1.0 / (c + _ranks(dense)) + 1.0 / (c + _ranks(sparse))
    alpha = float(setting["alpha"])
    return alpha * _minmax(dense) + (1.0 - alpha) * _minmax(sparse)


def rerank(ids: list[int], dense: list[float], bm25: Bm25, query: str, setting: dict | None = None
           ) -> list[tuple[int, float, float, float]]:
    """The candidates `ids` (dense order, with their dense scores) re-ranked by the fused score, best first:
    [(id, fused, dense, bm25)]; ties keep the dense order."""
    if not ids:
        return []
    sparse = bm25.scores(query)[np.asarray(ids)]
    fused = fuse(np.asarray(dense), sparse, setting)
    order = np.argsort(-fused, kind="stable")
    return [(int(ids[i]), float(fused[i]), float(dense[i]), float(sparse[i])) for i in order]
