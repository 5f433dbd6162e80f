"""What the NER task shows after a run, as plain data, each piece labelled with the split it is
on: seqeval's entity-level scores per type and overall, the confusion counts of word-level
tags, and the book's error analysis (the sentences with the highest loss, with where the
predicted tags differ from the gold ones)."""

from __future__ import annotations

from backend.engines.ner import metrics as ner_metrics

ERRORS_K = 10


def _r(v):
    return round(v, 4) if isinstance(v, float) else v


def scores(report: dict, split: str) -> dict:
    """`ner_metrics.report` rounded, with its split: {"split", "overall", "per_type"}."""
    return {"split": split, "overall": {k: _r(v) for k, v in report["overall"].items()},
            "per_type": {t: {k: _r(v) for k, v in r.items()} for t, r in sorted(report["per_type"].items())}}


def confusion(gold: list[list[str]], pred: list[list[str]], labels: list[str], split: str) -> dict:
    """Word-level tag counts (rows gold, columns predicted, in `labels` order) and each row as a
    fraction of its gold tag's words (0 for a tag with no words)."""
    counts = ner_metrics.confusion(gold, pred, labels)
    normalised = [[round(c / sum(row), 4) if sum(row) else 0.0 for c in row] for row in counts]
    return {"split": split, "labels": list(labels), "counts": counts, "normalised": normalised,
            "words": sum(map(sum, counts))}


def error_analysis(sentences: list[list[str]], gold: list[list[str]], pred: list[list[str]],
                   losses: list[float], split: str, k: int = ERRORS_K) -> dict:
    """The `k` sentences with the highest mean word loss, highest first: tokens, gold and predicted
    tags, which words differ, and the loss."""
    rows = ner_metrics.hardest(losses, sentences, gold, pred, k)
    for r in rows:
        r["loss"] = round(r["loss"], 4)
        r["differs"] = [g != p for g, p in zip(r["gold"], r["pred"])]
        r["wrong_words"] = sum(r["differs"])
    return {"split": split, "rows": rows, "of": len(losses)}


def predictions(sentences: list[list[str]], gold: list[list[str]], pred: list[list[str]]) -> list[dict]:
    """Every sentence's tokens with gold and predicted tags (what a caller recomputes the scores from)."""
    return [{"tokens": list(s), "gold": list(g), "pred": list(p)} for s, g, p in zip(sentences, gold, pred)]
