"""Checks on meaning (chapters 4, 6 and 9): embeddings across languages, what ROUGE counts against what
the models read, zero-shot by label similarity, and a classifier made of a handful of labelled examples."""

from __future__ import annotations

import numpy as np

from backend.challenges import models
from backend.challenges.words import words


def _shared_words(a: str, b: str) -> float:
    wa, wb = set(words(a)), set(words(b))
    return len(wa & wb) / max(1, min(len(wa), len(wb)))


def cross_lingual_twins(v: dict):
    """Chapter 4: an English sentence and its German translation that the multilingual encoder places
    together (cosine >= TWIN), further apart for the English-only encoder."""
    en, de = v["english"], v["german"]
    if _shared_words(en, de) > 0.5:
        return False, "The two sentences share most of their words: write the German sentence in German.", {}
    multi = models.embed([en, de], "multilingual")
    english_only = models.embed([en, de], "embedder")
    cm, ce = float(multi[0] @ multi[1]), float(english_only[0] @ english_only[1])
    ev = {"multilingual_cosine": round(cm, 3), "english_only_cosine": round(ce, 3), "bar": TWIN}
    if cm >= TWIN and cm - ce >= GAP:
        return True, (f"The multilingual encoder puts them together (cosine {cm:.3f}); the English-only one sees "
                      f"two different texts ({ce:.3f})."), ev
    if cm < TWIN:
        return False, f"The multilingual encoder gives cosine {cm:.3f} (needs {TWIN}): is it a faithful translation?", ev
    return False, (f"The English-only encoder also finds them close ({ce:.3f} against {cm:.3f}): use fewer words "
                   "the two languages share."), ev


TWIN, GAP = 0.85, 0.15


def compound_pieces(v: dict):
    """Chapter 4: a German word the multilingual SentencePiece vocabulary keeps in 1-2 pieces and English
    WordPiece cuts into 4 or more."""
    word = v["word"]
    if len(word.split()) != 1:
        return False, "Give one word (no spaces).", {}
    ml, _, _ = models.pieces("multilingual", word)
    wp, _, _ = models.pieces("encoder", word)
    ml = [p for p in ml if p != "\u2581"]
    ev = {"sentencepiece": ml, "wordpiece": wp}
    if len(ml) <= 2 and len(wp) >= 4:
        return True, f"SentencePiece (multilingual): {len(ml)} piece(s); WordPiece (English): {len(wp)}.", ev
    return False, (f"SentencePiece (multilingual): {len(ml)} piece(s) (needs at most 2); WordPiece (English): "
                   f"{len(wp)} (needs at least 4)."), ev


REFERENCE = "The customer was delighted with the quick delivery and the friendly staff."


def _rouge1(summary: str) -> float:
    from rouge_score import rouge_scorer

    return float(rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(REFERENCE, summary)["rouge1"].fmeasure)


def rouge_fooled(v: dict):
    """Chapter 6: a summary that ROUGE-1 scores high against the reference but that means the opposite."""
    r1 = _rouge1(v["summary"])
    ref, mine = models.sentiment([REFERENCE, v["summary"]])
    ev = {"rouge1_f": round(r1, 3), "reference": {"text": REFERENCE, "label": ref["label"], "score": ref["score"]},
          "summary": {"label": mine["label"], "score": mine["score"]}}
    if r1 >= HIGH_ROUGE and mine["label"] != ref["label"]:
        return True, (f"ROUGE-1 {r1:.2f}: most words match, yet the classifier reads {mine['label']} where the "
                      f"reference is {ref['label']}. ROUGE counts words, not meaning."), ev
    if r1 < HIGH_ROUGE:
        return False, f"ROUGE-1 is {r1:.2f} (needs {HIGH_ROUGE}): keep more of the reference's words.", ev
    return False, f"The classifier reads {mine['label']}, like the reference: the meaning did not flip.", ev


HIGH_ROUGE = 0.5


def paraphrase_low_rouge(v: dict):
    """Chapter 6: a summary that says what the reference says in other words: ROUGE-1 low, embeddings close."""
    r1 = _rouge1(v["summary"])
    vecs = models.embed([REFERENCE, v["summary"]])
    cos = float(vecs[0] @ vecs[1])
    ev = {"rouge1_f": round(r1, 3), "cosine": round(cos, 3), "reference": REFERENCE}
    if r1 <= LOW_ROUGE and cos >= CLOSE:
        return True, f"ROUGE-1 {r1:.2f}, yet the embedder finds the same meaning (cosine {cos:.3f}).", ev
    if r1 > LOW_ROUGE:
        return False, f"ROUGE-1 is {r1:.2f} (needs at most {LOW_ROUGE}): use other words than the reference's.", ev
    return False, f"The embedder's cosine is {cos:.3f} (needs {CLOSE}): the meaning drifted.", ev


LOW_ROUGE, CLOSE = 0.2, 0.6
ZERO_SHOT_LABELS = ("sport", "politics", "cooking", "technology")
ZERO_SHOT_TARGET = "cooking"
ZERO_SHOT_TEMPLATE = "This text is about {}."
BANNED = ("cook", "kitchen", "recipe", "food", "chef", "meal")


def zero_shot_winner(v: dict):
    """Chapter 9: a text that zero-shot files under 'cooking' without naming it."""
    used = sorted({w for w in words(v["text"]) if any(w.startswith(b) for b in BANNED)})
    if used:
        return False, f"The text uses {', '.join(used)}: describe it without those words.", {"banned": list(BANNED)}
    ranked = models.zero_shot(v["text"], list(ZERO_SHOT_LABELS), ZERO_SHOT_TEMPLATE)
    ev = {"ranking": [{"label": lab, "score": s} for lab, s in ranked]}
    if ranked[0][0] == ZERO_SHOT_TARGET:
        return True, f"Zero-shot files it under {ZERO_SHOT_TARGET} ({ranked[0][1]:.3f}), a label it never saw trained.", ev
    return False, f"Zero-shot picks {ranked[0][0]} ({ranked[0][1]:.3f}), not {ZERO_SHOT_TARGET}.", ev


HELD_OUT = (("I can't stop smiling, this is the best day of my life!", "joy"),
            ("We won the tickets and I am over the moon.", "joy"),
            ("Hugging my grandmother after ten years made me so happy.", "joy"),
            ("They cancelled my flight again and nobody even apologised!", "anger"),
            ("Stop lying to me, I am absolutely furious with you.", "anger"),
            ("The neighbours blasted music all night and I want to scream at them.", "anger"))


def few_labels(v: dict):
    """Chapter 9: 2-4 examples per label make a nearest-centroid classifier on embeddings that labels
    5 of the 6 held-out sentences right."""
    vecs = models.embed(v["joy"] + v["anger"] + [t for t, _ in HELD_OUT])
    nj, na = len(v["joy"]), len(v["anger"])
    cents = np.stack([vecs[:nj].mean(0), vecs[nj:nj + na].mean(0)])
    sims = vecs[nj + na:] @ cents.T
    guesses = ["joy" if s[0] >= s[1] else "anger" for s in sims]
    right = sum(g == want for g, (_, want) in zip(guesses, HELD_OUT))
    ev = {"held_out": [{"text": t, "label": want, "predicted": g} for (t, want), g in zip(HELD_OUT, guesses)],
          "right": right}
    if right >= 5:
        return True, f"Your {nj + na} examples label {right} of the 6 held-out sentences right.", ev
    return False, f"Your examples label only {right} of the 6 held-out sentences right (needs 5).", ev
