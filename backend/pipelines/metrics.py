"""Chapter 6's metrics: ROUGE-1/2/L for summaries, BLEU (sacrebleu) for translations."""

from __future__ import annotations

from functools import lru_cache

from backend.runtime.errors import InputError


@lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer  # imports nltk: load only when a reference is given

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(prediction: str, reference: str) -> dict:
    """ROUGE-1/2/L (F1, precision, recall) of `prediction` against `reference`, in [0, 1]."""
    if not (reference or "").strip():
        raise InputError("The reference summary is empty: paste one to compute ROUGE.")
    scores = _rouge_scorer().score(reference, prediction or "")
    return {
        name: {
            "f1": float(s.fmeasure),
            "precision": float(s.precision),
            "recall": float(s.recall),
        }
        for name, s in scores.items()
    }


def bleu(prediction: str, reference: str) -> dict:
    """Sentence BLEU (sacrebleu, 0-100) with its n-gram precisions and brevity penalty."""
    import sacrebleu

    if not (reference or "").strip():
        raise InputError("The reference translation is empty: paste one to compute BLEU.")
    result = sacrebleu.sentence_bleu(prediction or "", [reference])
    return {
        "bleu": float(result.score),
        "precisions": [float(p) for p in result.precisions],
        "brevity_penalty": float(result.bp),
        "signature": "sacrebleu sentence_bleu, 13a tokenizer, exp smoothing",
    }
