"""An extractive summary beside the lead-3 baseline: sentences of the text picked by the packaged
sentence encoder, by maximal marginal relevance (MMR) to the document's centroid.

Each sentence is embedded (mean-pooled, L2-normalised: `engines.embedding.vectors.embed_texts`); the
centroid of the sentences stands for the whole text. MMR picks, one at a time, the sentence most
similar to the centroid minus its similarity to the sentences already picked, so three picks
cover the text instead of repeating its main point (Carbonell and Goldstein, 1998). The picks are
shown in the text's order. Every word of such a summary is in the text: it cannot invent a fact,
which is what the chapter's comparison with abstractive models is about.
"""

from __future__ import annotations

import numpy as np

from backend.pipelines.metrics import BASELINE_SENTENCES, split_sentences

MMR_LAMBDA = 0.7  # weight of relevance to the centroid against redundancy with the picks
MAX_SENTENCES = 400  # sentences embedded at most; a longer text is read up to there, with a notice
NAME = "MMR over sentence embeddings (the packaged encoder)"


def mmr_pick(vectors: np.ndarray, n: int, lam: float = MMR_LAMBDA) -> tuple[list[int], np.ndarray]:
    """Indices of `n` rows picked by MMR against the rows' centroid (in pick order), and each
    row's cosine to the centroid. Rows are L2-normalised vectors."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if len(vectors) == 0:
        return [], np.zeros(0)
    centroid = vectors.mean(axis=0)
    norm = np.linalg.norm(centroid)
    relevance = vectors @ (centroid / norm) if norm > 0 else np.zeros(len(vectors))
    sims = vectors @ vectors.T
    picked: list[int] = []
    for _ in range(min(n, len(vectors))):
        best, best_score = -1, -np.inf
        for i in range(len(vectors)):
            if i in picked:
                continue
            redundancy = max((sims[i, j] for j in picked), default=0.0)
            score = lam * relevance[i] - (1 - lam) * redundancy
            if score > best_score:
                best, best_score = i, score
        picked.append(best)
    return picked, relevance


def extractive_summary(model, tokenizer, text: str, n: int = BASELINE_SENTENCES, lam: float = MMR_LAMBDA) -> dict:
    """{name, summary, picked (sentence indices, text order), sentences_in_text, relevance, notices}."""
    from backend.engines.embedding.vectors import embed_texts

    sentences = split_sentences(text)
    notices = []
    read = sentences[:MAX_SENTENCES]
    if len(sentences) > MAX_SENTENCES:
        notices.append(f"The extractive summary read the first {MAX_SENTENCES} of {len(sentences)} sentences.")
    if len(read) <= n:
        picked, relevance = list(range(len(read))), np.ones(len(read))
    else:
        picked, relevance = mmr_pick(embed_texts(read, model, tokenizer), n, lam)
    order = sorted(picked)
    return {"name": NAME, "summary": " ".join(read[i] for i in order), "picked": order,
            "pick_order": picked, "sentences_in_text": len(sentences), "lambda": lam,
            "relevance": [round(float(x), 4) for x in relevance], "notices": notices}
