"""Entity-level scores for BIO tagging, as seqeval's default mode computes them.

An entity counts as found only when its type and its exact span match a gold entity.
Entities are read from the tags with conlleval's chunk rules (seqeval's default, lenient
mode): an `I-X` after `O` or after another type starts an entity, a `B-X` always does, and a
change of type ends one. Precision, recall and F1 per type and micro-averaged over all types
(the "overall" line of conlleval and `seqeval.metrics.f1_score`); 0 where a ratio is 0/0.
"""

from __future__ import annotations

from collections import Counter


def _split(tag: str) -> tuple[str, str]:
    """(prefix, type) the way seqeval reads a tag: 'B-PER' -> ('B', 'PER'), 'O' -> ('O', '_')."""
    return tag[:1], (tag[1:].split("-", 1)[-1] or "_")


def _end_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    return (prev_tag in ("E", "S")
            or (prev_tag in ("B", "I") and tag in ("B", "S", "O"))
            or (prev_tag not in ("O", ".") and prev_type != type_))


def _start_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    return (tag in ("B", "S")
            or (prev_tag in ("E", "S", "O") and tag in ("E", "I"))
            or (tag not in ("O", ".") and prev_type != type_))


def entities(tags: list[str]) -> list[tuple[str, int, int]]:
    """(type, first word, last word) of each entity in one sentence's tags (last inclusive)."""
    out = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, chunk in enumerate(list(tags) + ["O"]):
        tag, type_ = _split(chunk)
        if _end_of_chunk(prev_tag, tag, prev_type, type_):
            out.append((prev_type, begin, i - 1))
        if _start_of_chunk(prev_tag, tag, prev_type, type_):
            begin = i
        prev_tag, prev_type = tag, type_
    return out


def _prf(tp: int, n_pred: int, n_true: int) -> dict:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_true if n_true else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "support": n_true, "predicted": n_pred, "correct": tp}


def report(gold: list[list[str]], pred: list[list[str]]) -> dict:
    """{"per_type": {type: {precision, recall, f1, support, predicted, correct}}, "overall": {...}}
    over sentences of gold and predicted tags (same lengths)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    true_c, pred_c, tp_c = Counter(), Counter(), Counter()
    for i, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        ge, pe = set(entities(g)), set(entities(p))
        true_c.update(t for t, _, _ in ge)
        pred_c.update(t for t, _, _ in pe)
        tp_c.update(t for t, _, _ in ge & pe)
    types = sorted(set(true_c) | set(pred_c))
    per = {t: _prf(tp_c[t], pred_c[t], true_c[t]) for t in types}
    overall = _prf(sum(tp_c.values()), sum(pred_c.values()), sum(true_c.values()))
    return {"per_type": per, "overall": overall}


def sentence_counts(gold: list[list[str]], pred: list[list[str]]) -> list[list[int]]:
    """[true positives, false positives, false negatives] of each sentence's entities (strict spans): summed
    they give `report`'s overall line; resampled by sentence they give its interval (backend.runtime.stats)."""
    out = []
    for g, p in zip(gold, pred):
        ge, pe = set(entities(g)), set(entities(p))
        out.append([len(ge & pe), len(pe - ge), len(ge - pe)])
    return out


def f1(gold: list[list[str]], pred: list[list[str]]) -> float:
    return report(gold, pred)["overall"]["f1"]


def confusion(gold: list[list[str]], pred: list[list[str]], labels: list[str]) -> list[list[int]]:
    """Tag confusion counts per word: rows are gold tags, columns predicted, in `labels` order
    (a tag not in `labels` is counted under the last row/column only if it is listed)."""
    pos = {l: i for i, l in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, pred):
        for a, b in zip(g, p):
            if a in pos and b in pos:
                m[pos[a]][pos[b]] += 1
    return m


def hardest(losses: list[float], sentences: list[list[str]], gold: list[list[str]], pred: list[list[str]],
            k: int = 10) -> list[dict]:
    """The `k` sentences with the highest loss (the book's error analysis): words, gold and
    predicted tags, and the loss, highest first."""
    order = sorted(range(len(losses)), key=lambda i: -losses[i])[:k]
    return [{"index": i, "loss": float(losses[i]), "tokens": list(sentences[i]), "gold": list(gold[i]),
             "pred": list(pred[i])} for i in order]
