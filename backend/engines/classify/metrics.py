"""Scores the book reports for a classifier: accuracy, macro-F1, the normalised confusion matrix.

Plain numpy on label indices, so every method (zero-shot, probe, fine-tuning) is scored by
the same code; no scikit-learn at run time (its import costs ~10 s).
"""

from __future__ import annotations

import numpy as np


def confusion(y_true, y_pred, n_labels: int) -> np.ndarray:
    """Counts: rows = true label, columns = predicted label."""
    m = np.zeros((n_labels, n_labels), dtype=np.int64)
    np.add.at(m, (np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)), 1)
    return m


def normalise_rows(m: np.ndarray) -> np.ndarray:
    """Each row divided by its total (the book's `normalize="true"`); empty rows stay 0."""
    m = np.asarray(m, dtype=np.float64)
    totals = m.sum(axis=1, keepdims=True)
    return np.divide(m, totals, out=np.zeros_like(m), where=totals > 0)


def accuracy(y_true, y_pred) -> float:
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float((y_true == y_pred).mean()) if len(y_true) else 0.0


SMALL_SAMPLE = 30  # below this many examples an accuracy is shown with its count and 95% interval
Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


def wilson_interval(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion `correct`/`n` (better than p ± z·se for small n and
    for p near 0 or 1: 4/4 gives [0.51, 1.00], not [1, 1]). n = 0 says nothing: [0, 1]."""
    if n <= 0:
        return 0.0, 1.0
    p = correct / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def f1_per_label(m: np.ndarray) -> np.ndarray:
    """F1 of each label from a count matrix; a label never predicted nor present scores 0."""
    tp = np.diag(m).astype(np.float64)
    predicted, actual = m.sum(axis=0), m.sum(axis=1)
    denom = predicted + actual
    return np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)


def macro_f1(y_true, y_pred, n_labels: int) -> float:
    """Unweighted mean of per-label F1 over the labels present in y_true or y_pred."""
    m = confusion(y_true, y_pred, n_labels)
    seen = (m.sum(axis=0) + m.sum(axis=1)) > 0
    f1 = f1_per_label(m)
    return float(f1[seen].mean()) if seen.any() else 0.0


def log_loss_each(probs: np.ndarray, y_true) -> np.ndarray:
    """Cross-entropy of each example: -log p(true label)."""
    p = np.asarray(probs, dtype=np.float64)[np.arange(len(y_true)), np.asarray(y_true, dtype=np.int64)]
    return -np.log(np.clip(p, 1e-12, 1.0))


def report(y_true, probs: np.ndarray, labels: list[str]) -> dict:
    """JSON-able scores of one method on one split, from its probabilities."""
    probs = np.asarray(probs, dtype=np.float64)
    y_pred = probs.argmax(axis=1)
    m = confusion(y_true, y_pred, len(labels))
    correct = int(np.trace(m))
    lo, hi = wilson_interval(correct, len(y_true))
    return {
        "accuracy": round(accuracy(y_true, y_pred), 4),
        "correct": correct,
        "ci95": [round(lo, 4), round(hi, 4)],  # Wilson score interval of the accuracy
        "small_sample": len(y_true) < SMALL_SAMPLE,
        "macro_f1": round(macro_f1(y_true, y_pred, len(labels)), 4),
        "loss": round(float(log_loss_each(probs, y_true).mean()), 4) if len(y_true) else 0.0,
        "n": int(len(y_true)),
        "confusion": {"labels": list(labels), "counts": m.tolist(),
                      "normalised": np.round(normalise_rows(m), 4).tolist()},
        "f1_per_label": {l: round(float(f), 4) for l, f in zip(labels, f1_per_label(m))},
    }


def hardest(texts: list[str], y_true, probs: np.ndarray, labels: list[str], k: int = 10) -> list[dict]:
    """The k examples with the highest loss, with predicted and true labels (the book's error analysis)."""
    probs = np.asarray(probs, dtype=np.float64)
    losses = log_loss_each(probs, y_true)
    order = np.argsort(-losses, kind="stable")[:k]
    return [{"text": texts[i], "true": labels[int(y_true[i])], "predicted": labels[int(probs[i].argmax())],
             "loss": round(float(losses[i]), 4), "p_true": round(float(probs[i, int(y_true[i])]), 4)}
            for i in order]


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """2-D PCA by SVD of the centred data -> (coords (n, 2), explained variance ratios)."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return np.zeros((len(x), 2)), [1.0, 0.0]
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:2] if vt.shape[0] >= 2 else np.vstack([vt, np.zeros_like(vt)])
    var = s ** 2
    total = var.sum() or 1.0
    explained = [round(float(v / total), 4) for v in list(var[:2]) + [0.0] * (2 - len(var[:2]))]
    return centred @ comps.T, explained
