"""Which retrieval should Ask the corpus use on the glossary: dense (the embedder's cosine, as the Search tab
ranks), BM25 (sparse, the book's chapter 7 retriever) or the two fused (backend/engines/embedding/hybrid.py: the
dense top CANDIDATES re-ranked)? Recall@1 and @5 on the glossary QA VALIDATION split (answerable questions: the
share whose own passage is first / in the first 5), with both embedders the Search tab offers, over a grid of
fusion settings; the setting with the best recall@1 (then @5, then the largest dense weight) for the English embedder is the one to keep in
hybrid.SETTING. Passages are embedded as Ask's index embeds them ("title: text", e5's "passage: " prefix).
Writes bench/results/glossary_retrieval.md.

    OMP_NUM_THREADS=1 .venv/bin/python bench/glossary_retrieval.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TLAB_PROFILE", "local")

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "glossary_retrieval.md"
GRID = ([{"method": "weighted", "alpha": a} for a in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]
        + [{"method": "rrf", "c": c} for c in (1, 5, 10, 30, 60)])


def _recall(ranked: list[list[int]], gold: list[int], k: int) -> float:
    return 100.0 * float(np.mean([g in r[:k] for r, g in zip(ranked, gold)]))


def _name(s: dict) -> str:
    return f"weighted alpha={s['alpha']}" if s["method"] == "weighted" else f"RRF c={s['c']}"


def _cross_lingual(passages: list[dict], docs: list[str], bm25) -> list[str]:
    """The multilingual embedder on the German, French and Italian questions over the English glossary
    (assets/corpus/glossary_cross_lingual.jsonl): dense against fused at hybrid.SETTING."""
    from backend.engines.embedding import hybrid
    from backend.search.api import load_embedder
    from backend.search.embedders import MULTILINGUAL

    rows = [json.loads(line) for line in open(ROOT / "assets" / "corpus" / "glossary_cross_lingual.jsonl",
                                              encoding="utf-8") if line.strip()]
    titles = [p["title"] for p in passages]
    gold = [titles.index(r["passage"]) for r in rows]
    emb = load_embedder(embedder=MULTILINGUAL)
    vectors, queries = emb.embed(emb.passages(docs)), emb.embed(emb.queries([r["question"] for r in rows]))
    dense, fused = [], []
    for r, v in zip(rows, queries):
        s = vectors @ v
        order = [int(i) for i in np.argsort(-s, kind="stable")]
        cands = order[:hybrid.CANDIDATES]
        dense.append(order)
        fused.append([i for i, *_ in hybrid.rerank(cands, [float(s[i]) for i in cands], bm25, r["question"])])
    return ["", f"Cross-lingual ({len(rows)} German, French and Italian questions over the English passages, "
            f"multilingual embedder): dense recall@1 {_recall(dense, gold, 1):.1f}, @5 {_recall(dense, gold, 5):.1f}; "
            f"fused ({_name(hybrid.SETTING)}) recall@1 {_recall(fused, gold, 1):.1f}, @5 {_recall(fused, gold, 5):.1f}. "
            "So Ask fuses with the English embedder only (backend/search/retrieval.py)."]


def main() -> None:
    from backend.engines.embedding import hybrid
    from backend.engines.qa import adaptation, data as qa_data
    from backend.search.api import load_embedder
    from backend.search.embedders import ENGLISH, MULTILINGUAL

    passages = [json.loads(line) for line in open(ROOT / "assets" / "corpus" / "glossary.jsonl", encoding="utf-8")
                if line.strip()]
    questions = [q for q in qa_data.load("validation", qa_data.GLOSSARY_DIR) if q.answerable]
    gold = adaptation.gold_passages(passages, questions)
    questions, gold = [q for q, g in zip(questions, gold) if g is not None], [g for g in gold if g is not None]
    docs = [f"{p['title']}: {p['text']}" for p in passages]
    bm25 = hybrid.Bm25(docs)
    sparse = [bm25.scores(q.question) for q in questions]
    bm25_ranked = [list(np.argsort(-s, kind="stable")) for s in sparse]
    lines = [f"# Glossary retrieval: dense, BM25, fused (validation, {len(questions)} answerable questions, "
             f"{len(passages)} passages)", "",
             f"Fusion re-ranks the dense top {hybrid.CANDIDATES}. Recall in %. Written by bench/glossary_retrieval.py.",
             "", "| embedder | retrieval | recall@1 | recall@5 |", "|---|---|---|---|"]
    lines.append(f"| - | BM25 alone | {_recall(bm25_ranked, gold, 1):.1f} | {_recall(bm25_ranked, gold, 5):.1f} |")
    best = {}
    for choice in (ENGLISH, MULTILINGUAL):
        t0 = time.perf_counter()
        emb = load_embedder(embedder=choice)
        vectors = emb.embed(emb.passages(docs))
        queries = emb.embed(emb.queries([q.question for q in questions]))
        dense = [list(np.argsort(-(vectors @ v), kind="stable")) for v in queries]
        lines.append(f"| {choice} | dense | {_recall(dense, gold, 1):.1f} | {_recall(dense, gold, 5):.1f} |")
        scored = []
        for setting in GRID:
            ranked = []
            for v, d, s in zip(queries, dense, sparse):
                cands = d[:hybrid.CANDIDATES]
                order = np.argsort(-hybrid.fuse((vectors @ v)[cands], s[cands], setting), kind="stable")
                ranked.append([cands[i] for i in order] + d[hybrid.CANDIDATES:])
            r1, r5 = _recall(ranked, gold, 1), _recall(ranked, gold, 5)
            scored.append((r1, r5, setting))
            lines.append(f"| {choice} | fused, {_name(setting)} | {r1:.1f} | {r5:.1f} |")
        best[choice] = max(scored, key=lambda x: (x[0], x[1], x[2].get("alpha", -1.0)))  # ties: the most dense weight
        print(choice, "done in", round(time.perf_counter() - t0, 1), "s", flush=True)
    lines += _cross_lingual(passages, docs, bm25)
    lines += ["", "Best fusion on validation (recall@1, then @5; on ties the largest dense weight, which cross-lingual "
              "questions need: BM25 matches no word of a German question to an English passage):"]
    lines += [f"- {c}: {_name(s)}: recall@1 {r1:.1f}, recall@5 {r5:.1f}" for c, (r1, r5, s) in best.items()]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
