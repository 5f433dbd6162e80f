"""Checks on retrieval, reading and compression (chapters 7 and 8): a query that finds a passage of the
shipped glossary first, a question the QA reader must refuse, and labelled sentences on which the sentiment
classifier's int8 copy scores as its float32 original."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from backend.challenges import models
from backend.challenges.words import words

GLOSSARY = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "glossary.jsonl"
TARGET_TITLE = "Knowledge distillation"
BANNED = ("distil", "knowledg")
_VECS: dict = {}
_LOCK = threading.Lock()


def _passages() -> list[dict]:
    return [json.loads(line) for line in GLOSSARY.read_text().splitlines() if line.strip()]


def _corpus_vectors(passages: list[dict]) -> np.ndarray:
    """The glossary's embeddings (title and text, as the Search tab embeds a passage), once per process."""
    with _LOCK:
        if "glossary" not in _VECS:
            _VECS["glossary"] = models.embed([f"{p['title']}: {p['text']}" for p in passages])
        return _VECS["glossary"]


def search_first(v: dict):
    """Chapter 7: a query that ranks the glossary's 'Knowledge distillation' passage first, without its words."""
    used = sorted({w for w in words(v["query"]) if any(w.startswith(b) for b in BANNED)})
    if used:
        return False, f"The query uses {', '.join(used)}: find the passage by meaning, not by its name.", {}
    passages = _passages()
    scores = _corpus_vectors(passages) @ models.embed([v["query"]])[0]
    order = np.argsort(-scores, kind="stable")
    rank = [passages[i]["title"] for i in order].index(TARGET_TITLE) + 1
    ev = {"top_3": [{"title": passages[i]["title"], "cosine": round(float(scores[i]), 3)} for i in order[:3]],
          "target_rank": rank, "passages": len(passages)}
    if rank == 1:
        return True, f"'{TARGET_TITLE}' comes first of {len(passages)} passages (cosine {scores[order[0]]:.3f}).", ev
    return False, f"'{TARGET_TITLE}' comes {rank}th; first is '{passages[order[0]]['title']}'.", ev


PASSAGE = ("The harbour of Port Elen was built in 1851 by the Campbell family. It shipped whisky barrels from the "
           "island's three distilleries until 1972, when a deeper pier opened at Port Askaig.")
_PASSAGE_WORDS = {w for w in words(PASSAGE) if len(w) >= 4}


def reader_refuses(v: dict):
    """Chapter 7: a question about the passage that the passage cannot answer, and the reader says so."""
    topic = sorted(_PASSAGE_WORDS & set(words(v["question"])))
    if not topic:
        return False, "The question must be about the passage: use at least one of its words (harbour, pier...).", {}
    r = models.reader(v["question"], PASSAGE)
    ev = {"passage": PASSAGE, "reader": r, "shared_words": topic}
    if r["no_answer"]:
        return True, (f"The reader refuses: its best span '{r['best_span']}' scores below its no-answer score "
                      f"(margin {r.get('margin')})."), ev
    return False, f"The reader answers '{r['answer']}': it found a span it trusts.", ev


def _accuracy(results: list[dict], wanted: list[str]) -> float:
    return sum(r["label"].upper() == w for r, w in zip(results, wanted)) / len(wanted)


def int8_within_point(v: dict):
    """Chapter 8: labelled sentences on which the fp32 classifier scores >= 75% and its int8 copy within
    one point of it."""
    from backend.engines.compression.quantize import int8_of

    texts = v["positive"] + v["negative"]
    wanted = ["POSITIVE"] * len(v["positive"]) + ["NEGATIVE"] * len(v["negative"])
    fp32 = models.sentiment(texts)
    lm = models.sentiment_model()
    int8, _ = int8_of(lm)
    low = models.sentiment(texts, model=int8)
    a32, a8 = _accuracy(fp32, wanted), _accuracy(low, wanted)
    drift = max(abs(x["scores"][k] - y["scores"][k]) for x, y in zip(fp32, low) for k in x["scores"])
    ev = {"fp32_accuracy": round(a32, 4), "int8_accuracy": round(a8, 4), "max_score_change": round(drift, 4),
          "disagree": [t for t, x, y in zip(texts, fp32, low) if x["label"] != y["label"]]}
    if a32 >= 0.75 and abs(a32 - a8) <= 0.01:
        return True, (f"fp32 {a32:.0%}, int8 {a8:.0%}: the four-times-smaller copy keeps the teacher's accuracy "
                      f"(scores move by at most {drift:.4f})."), ev
    if a32 < 0.75:
        return False, f"The fp32 classifier gets only {a32:.0%} of your labels right (needs 75%): check the labels.", ev
    return False, f"fp32 {a32:.0%} but int8 {a8:.0%}: more than one point apart.", ev
