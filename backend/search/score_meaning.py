"""What a search score means, read off this query and this index: a cosine similarity has no fixed scale
across embedders (multilingual-e5 puts unrelated passages at 0.76-0.80, MiniLM near 0), so a score is read
against the same query's scores over the corpus (a seeded sample of its passages) and against the next
result (the margin). A gap smaller than NARROW between the top result and the corpus's typical passage, or a
margin under the sample's own spread, carries no meaning on its own."""

from __future__ import annotations

import numpy as np

SAMPLE = 2000  # passages scored against the query for its typical score (all of them in a smaller corpus)
NARROW = 0.15  # the sample's middle 90% of scores spanning less than this: a narrow band


def context(vectors: np.ndarray, query_vector: np.ndarray, scores: list[float], seed: int = 0) -> dict | None:
    """{"median", "p05", "p95", "sampled", "top", "margin", "top_above_median", "narrow", "margin_within_spread",
    "text"} for the result scores `scores` (best first); None without vectors or results."""
    if vectors is None or not len(vectors) or not scores:
        return None
    n = len(vectors)
    idx = np.random.default_rng(seed).choice(n, size=SAMPLE, replace=False) if n > SAMPLE else np.arange(n)
    q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    sims = np.asarray(vectors, dtype=np.float32)[idx] @ q
    p05, median, p95 = (float(x) for x in np.percentile(sims, [5, 50, 95]))
    top = float(scores[0])
    margin = float(scores[0] - scores[1]) if len(scores) > 1 else None
    spread = p95 - p05
    out = {"median": round(median, 4), "p05": round(p05, 4), "p95": round(p95, 4), "sampled": int(len(idx)),
           "top": round(top, 4), "margin": None if margin is None else round(margin, 4),
           "top_above_median": round(top - median, 4), "narrow": bool(spread < NARROW),
           "margin_within_spread": bool(margin is not None and margin < 0.1 * spread)}
    said = (f"A score is a cosine similarity; its scale depends on the embedder. For this query, {len(idx):,} "
            f"passages of the corpus score {p05:.2f}-{p95:.2f} (middle 90%, median {median:.2f}); the top result, "
            f"{top:.3f}, is {top - median:+.3f} above that median")
    if margin is not None:
        said += f" and {margin:.3f} above the next result"
    said += "."
    if out["narrow"]:
        said += (f" This embedder puts almost every passage in a narrow band ({spread:.2f} wide), so a gap of a few "
                 "hundredths between two scores carries no meaning on its own: compare each with the median.")
    if out["margin_within_spread"]:
        said += (" The top two are closer than a tenth of that spread: the order between them is not a strong "
                 "preference.")
    out["text"] = said
    return out
