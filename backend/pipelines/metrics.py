"""Chapter 6's metrics: ROUGE-1/2/L for summaries, BLEU (sacrebleu) for translations, and the
book's summarisation baseline (the first three sentences)."""

from __future__ import annotations

import re
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
    counts, totals = [int(c) for c in result.counts], [int(t) for t in result.totals]
    return {
        "bleu": float(result.score),
        "precisions": [float(p) for p in result.precisions],
        # what the precisions are made of: matching n-grams / n-grams in the prediction, n = 1..4;
        # where none match, sacrebleu's exp smoothing puts a small made-up precision instead of 0
        # ("smoothed"); where the prediction has no n-grams of that length, the order is unused
        "counts": counts,
        "totals": totals,
        "precision_kinds": ["matched" if c else "smoothed" if t else "unused" for c, t in zip(counts, totals)],
        "brevity_penalty": float(result.bp),
        "signature": "sacrebleu sentence_bleu, 13a tokenizer, exp smoothing",
    }


# Chapter 6's baseline: the first three sentences of the text. The book splits with nltk's punkt
# (a download); this splitter needs none: a sentence ends at . ! or ? (closing quotes or brackets
# may follow) before white space and a capital, digit or opening quote, unless the word before is
# a known abbreviation or a single letter (initials, "U.S."). A line break always ends one.
_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co",
    "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "gen", "col", "gov", "sen", "rep", "approx", "dept", "est", "u.s", "u.k",
}
_BEFORE_NUMBER = {"no", "fig", "vol", "pp", "nr"}  # "No. 5", "Fig. 2"; but "No." alone is a sentence
_BOUNDARY = re.compile(r"([.!?…]+[\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
BASELINE_SENTENCES = 3
BASELINE_NAME = "the first three sentences (chapter 6's baseline)"


def split_sentences(text: str) -> list[str]:
    """`text` cut into sentences without nltk: good enough for a baseline, never empty pieces."""
    sentences: list[str] = []
    for line in re.split(r"\s*\n\s*", (text or "").strip()):
        if not line:
            continue
        start = 0
        for m in _BOUNDARY.finditer(line):
            end = m.end(1)
            word = re.search(r"(\S+)$", line[start:end])
            token = (word.group(1) if word else "").rstrip(".!?…\"'”’)]").lstrip("\"'“‘([").lower()
            numbered = token in _BEFORE_NUMBER and line[m.end():m.end() + 1].isdigit()
            if m.group(1).startswith(".") and (token in _ABBREVIATIONS or numbered or re.fullmatch(r"[a-z]", token)):
                continue  # "Dr. Smith", "J. R. R. Tolkien": not an end
            sentences.append(line[start:end].strip())
            start = m.end()
        if line[start:].strip():
            sentences.append(line[start:].strip())
    return sentences


def lead_baseline(text: str, n: int = BASELINE_SENTENCES) -> dict:
    """The book's summarisation baseline: the first `n` sentences of the text, joined."""
    sentences = split_sentences(text)
    return {"name": BASELINE_NAME, "summary": " ".join(sentences[:n]), "sentences_in_text": len(sentences),
            "sentences_used": min(n, len(sentences))}


def rouge_table(summaries: dict[str, str], reference: str) -> list[dict]:
    """One row per named summary: its ROUGE-1/2/L F1 against `reference` (the chapter's table)."""
    rows = []
    for name, summary in summaries.items():
        s = rouge(summary, reference)
        rows.append({"summary": name, **{k: round(v["f1"], 4) for k, v in s.items()}})
    return rows
