"""Cross-lingual retrieval on the glossary: German, French and Italian questions whose answer is one
English passage (assets/corpus/glossary_cross_lingual.jsonl, written by the project), searched with the
multilingual index (multilingual-e5-small, "query: " / "passage: " prefixes) and with the English MiniLM
index (all-MiniLM-L6-v2, the book's chapter 7 embedder), plus both on the English questions the foreign
ones were written from. Recall@1/3/5: the share of questions whose passage is in the top k (exact Flat
search, so the index type plays no part). Writes bench/results/cross_lingual_search.md.

    .venv/bin/python bench/cross_lingual_search.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TLAB_PROFILE", "local")

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "cross_lingual_search.md"
NAMES = {"de": "German", "fr": "French", "it": "Italian"}


def _ranker(service, session: str, emb):
    return lambda text: [r["title"] for r in service.search(session, text, 5, emb)["results"]]


def _rows(label: str, rows: list[dict], rank, field: str) -> tuple[list[str], list]:
    from backend.search import cross_lingual as xl

    lines, misses = [], []
    for lang in xl.LANGUAGES:
        part = [r for r in rows if r["lang"] == lang]
        m = xl.recall_at(part, rank, field)
        lines.append(f"| {label} | {NAMES[lang] if field == 'question' else 'English (from ' + NAMES[lang] + ')'} "
                     f"| {m['n']} | {m['recall@1']:.2f} | {m['recall@3']:.2f} | {m['recall@5']:.2f} |")
        misses += m["misses"]
    m = xl.recall_at(rows, rank, field)
    lines.append(f"| {label} | **{'all three' if field == 'question' else 'all English'}** | {m['n']} "
                 f"| **{m['recall@1']:.2f}** | **{m['recall@3']:.2f}** | **{m['recall@5']:.2f}** |")
    return lines, misses


def main() -> None:
    from backend.search import cross_lingual as xl
    from backend.search.api import index_settings, load_corpus, load_embedder
    from backend.search.embedders import EMBEDDER_LABELS, ENGLISH, MULTILINGUAL
    from backend.search.service import get_service

    rows = xl.load_queries()
    service = get_service()
    corpus, _ = load_corpus("glossary")
    table = ["| index (embedder) | questions in | n | recall@1 | recall@3 | recall@5 |", "|---|---|---|---|---|---|"]
    notes, misses_md = [], []
    for choice in (MULTILINGUAL, ENGLISH):
        t0 = time.perf_counter()
        emb = load_embedder(embedder=choice)
        t1 = time.perf_counter()
        stats = service.build(f"bench-{choice}", corpus, index_settings("flat"), emb, shared=True)
        t2 = time.perf_counter()
        rank = _ranker(service, f"bench-{choice}", emb)
        label = f"{EMBEDDER_LABELS[choice].split(':')[0]} (`{emb.name}`)"
        foreign, miss_f = _rows(label, rows, rank, "question")
        english, miss_e = _rows(label, rows, rank, "english")
        t3 = time.perf_counter()
        table += foreign + english
        cached = "embeddings from the cache" if stats["embeddings_from_cache"] else f"embedded in {stats['embed_s']:.1f} s"
        notes.append(f"- {label}: loaded in {t1 - t0:.1f} s; glossary ({stats['count']} passages) {cached}; "
                     f"{2 * len(rows)} queries in {t3 - t2:.1f} s.")
        misses_md.append(f"- {label}, foreign questions not in the top 5 (id: its top passage): "
                         + (", ".join(f"{i}: {t}" for i, t in miss_f) or "none")
                         + "; English: " + (", ".join(f"{i}: {t}" for i, t in miss_e) or "none") + ".")
    counts = ", ".join(f"{sum(r['lang'] == lang for r in rows)} {NAMES[lang]}" for lang in xl.LANGUAGES)
    text = ["# Cross-lingual search on the glossary (bench/cross_lingual_search.py)", "",
            f"{len(rows)} questions ({counts}) "
            "from assets/corpus/glossary_cross_lingual.jsonl (data card beside it), each answered by one English "
            "glossary passage; the same questions in English below. Exact (Flat) inner-product search over the "
            "whole glossary; recall@k is the share of questions whose passage is in the top k.", "",
            *table, "", *notes, "", *misses_md, ""]
    OUT.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
