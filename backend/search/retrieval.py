"""Ask the corpus's retrieval: the session's FAISS index (dense) finds the candidates, BM25 over their title and
text re-ranks them (backend/engines/embedding/hybrid.py: the fusion and its setting, chosen on the glossary's
validation questions). The Search tab's own search stays dense; only Ask re-ranks, and only with the English
embedder: the multilingual one is there for questions in another language than the passages, where BM25 finds no
shared word (on the glossary's cross-lingual questions fusion lowered recall@1: bench/glossary_retrieval.py). The reader adapted to the
glossary had its rule chosen, and its table measured, on this same retrieval (backend/engines/qa/adaptation.py).
"""

from __future__ import annotations

import threading

from cachetools import LRUCache

from backend.engines.embedding import hybrid
from backend.search.embedders import ENGLISH

_LOCK = threading.Lock()
_BM25: LRUCache = LRUCache(maxsize=8)  # index key -> its corpus's BM25
# BM25 over a whole corpus up to this many passages (the glossary: 276, built in ~0.3 s). Its statistics are Python
# dicts, stemmed word by word: 20,000 passages (public mode's largest index) took 33 s and 480 MB on a loaded
# 2-core box, a cost no Ask's contract prices; above it BM25 scores the candidates among themselves (its IDF from
# them), a bounded few milliseconds.
WHOLE_CORPUS_MAX = 2000
EXPLAIN = ("BM25 is the sparse retriever the book's chapter 7 starts with: a passage scores by the question's words "
           "it contains, rare words counting more, repeats less, long passages discounted; it catches exact terms "
           "(\"int8\", \"WordPiece\") that a small embedder blurs, the dense retriever catches paraphrases.")


DENSE_ONLY = ("dense: the index's nearest passages by the multilingual embedder (cosine), not re-ranked with BM25 "
              "(which Ask mixes in with the English embedder): BM25 scores the question's words, and a German or French "
              "question shares almost none with an English passage, so on the glossary's cross-lingual questions "
              "fusion lowered recall@1 (bench/results/glossary_retrieval.md).")


def _bm25(entry) -> hybrid.Bm25:
    """The whole corpus's BM25 (its rare words are the corpus's), kept per index."""
    with _LOCK:
        if entry.key not in _BM25:
            _BM25[entry.key] = hybrid.Bm25(entry.corpus.texts_for_embedding())
        return _BM25[entry.key]


def describe(candidates: int = hybrid.CANDIDATES) -> dict:
    """Which retrieval served, with one line that says what it did (plain data for the page)."""
    s = hybrid.SETTING
    how = (f"{s['alpha']:g} x cosine + {1 - s['alpha']:g} x BM25, each scaled to 0..1 over the candidates"
           if s["method"] == "weighted" else f"reciprocal rank fusion, 1/({s['c']} + rank) from each")
    return {**s, "fusion": s["method"], "method": "fused", "candidates": candidates,
            "line": (f"fused (dense + BM25): the index's {candidates} nearest passages by the embedder, re-ranked by "
                     f"{how} (the mix chosen on the glossary's validation questions). {EXPLAIN} Only Ask re-ranks: "
                     "the Search tab's search above stays dense.")}


def ask_passages(service, session_id: str, question: str, k: int, embedder) -> tuple[list[dict], dict]:
    """The first `k` passages Ask reads, best first, each with its fused score ("score"), its cosine ("dense"),
    its place in the dense order ("dense_rank") and its BM25 score ("bm25"); and `describe()`'s summary."""
    entry = service.current(session_id)
    if getattr(embedder, "choice", ENGLISH) != ENGLISH:  # cross-lingual questions: BM25 matches no word
        return service.search(session_id, question, k, embedder)["results"], {
            "method": "dense", "candidates": k, "line": DENSE_ONLY}
    res = service.search(session_id, question, max(k, hybrid.CANDIDATES), embedder)
    cands = res["results"]
    if entry is None or service.current(session_id) is not entry or not cands:  # the index changed meanwhile
        return cands[:k], {"method": "dense", "candidates": len(cands),
                           "line": "dense: the index's nearest passages by the embedder (cosine)."}
    by_id = {c["id"]: c for c in cands}
    ids, dense = [c["id"] for c in cands], [c["score"] for c in cands]
    if len(entry.corpus.passages) <= WHOLE_CORPUS_MAX:
        ranked = hybrid.rerank(ids, dense, _bm25(entry), question)
    else:  # a large corpus: BM25 among the candidates, its statistics theirs
        texts = entry.corpus.texts_for_embedding()
        local = hybrid.rerank(list(range(len(ids))), dense, hybrid.Bm25([texts[i] for i in ids]), question)
        ranked = [(ids[j], fused, d, sparse) for j, fused, d, sparse in local]
    out = [{**by_id[i], "rank": r, "score": round(fused, 4), "dense": by_id[i]["score"],
            "dense_rank": by_id[i]["rank"], "bm25": round(sparse, 3)}
           for r, (i, fused, _, sparse) in enumerate(ranked[:k], start=1)]
    how = describe(len(cands))
    if len(entry.corpus.passages) > WHOLE_CORPUS_MAX:
        how["line"] += (f" This corpus has over {WHOLE_CORPUS_MAX:,} passages, so BM25 weighs words by their rarity "
                        f"among the {len(cands)} candidates, not in the whole corpus (which would take minutes here).")
    return out, how
