"""Checks on words and tokens (chapters 1, 2, 3 and 10): the sentiment classifier on the learner's
sentences, two tokenizers on the learner's text, and a byte-pair encoding trained from scratch on the
learner's corpus. Each check takes the parsed answer and returns (passed, reason, evidence)."""

from __future__ import annotations

import re
from collections import Counter

from backend.challenges import models

_WORD = re.compile(r"[\w']+", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _labelled(results: list[dict], names=("a", "b")) -> dict:
    return {n: {"label": r["label"], "score": r["score"]} for n, r in zip(names, results)}


def mixed_review(v: dict):
    """Chapter 1: a review the classifier is unsure about (top score below the bar)."""
    n = len(words(v["text"]))
    if n < 6:
        return False, f"The review has {n} words; write at least 6, praising one thing and criticising another.", {}
    r = models.sentiment([v["text"]])[0]
    ev = {"label": r["label"], "score": r["score"], "scores": r["scores"], "bar": UNSURE}
    if r["score"] < UNSURE:
        return True, f"The classifier is torn: {r['label']} at only {r['score']:.3f} (below {UNSURE}).", ev
    return False, f"The classifier is sure: {r['label']} at {r['score']:.3f} (needs below {UNSURE}).", ev


UNSURE = 0.75


def word_edits(a: str, b: str) -> list[tuple[str, str]]:
    """The fewest word edits that turn `a` into `b` (words split at spaces): [(old, new)], "" for a word added
    or removed (a word-level Levenshtein alignment)."""
    wa, wb = a.split(), b.split()
    cost = [[i + j if i * j == 0 else 0 for j in range(len(wb) + 1)] for i in range(len(wa) + 1)]
    for i in range(1, len(wa) + 1):
        for j in range(1, len(wb) + 1):
            cost[i][j] = min(cost[i - 1][j] + 1, cost[i][j - 1] + 1, cost[i - 1][j - 1] + (wa[i - 1] != wb[j - 1]))
    edits, i, j = [], len(wa), len(wb)
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (wa[i - 1] != wb[j - 1]):
            if wa[i - 1] != wb[j - 1]:
                edits.append((wa[i - 1], wb[j - 1]))
            i, j = i - 1, j - 1
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            edits.append((wa[i - 1], ""))
            i -= 1
        else:
            edits.append(("", wb[j - 1]))
            j -= 1
    return edits[::-1]


def flip_sentiment(v: dict):
    """Chapter 2: two sentences one word apart (one word changed, added or removed) that the classifier
    labels differently."""
    edits = word_edits(v["a"], v["b"])
    if len(edits) != 1:
        shown = [{"from": x, "to": y} for x, y in edits[:10]]
        return False, (f"The sentences differ in {len(edits)} words; change, add or remove exactly one."
                       if edits else "The sentences are the same: change exactly one word."), {"changed": shown}
    (old, new), = edits
    ra, rb = models.sentiment([v["a"], v["b"]])
    what = f"changing '{old}' to '{new}'" if old and new else f"adding '{new}'" if new else f"removing '{old}'"
    ev = {**_labelled([ra, rb]), "changed": {"from": old, "to": new}}
    if ra["label"] != rb["label"]:
        return True, (f"{what[0].upper() + what[1:]} flips the label: a is {ra['label']} ({ra['score']:.3f}), b is "
                      f"{rb['label']} ({rb['score']:.3f})."), ev
    return False, (f"Both get {ra['label']} (a {ra['score']:.3f}, b {rb['score']:.3f}): {what} did not flip the "
                   "label."), ev


def order_matters(v: dict):
    """Chapter 3: the same words in another order, labelled differently (position changes meaning)."""
    if Counter(words(v["a"])) != Counter(words(v["b"])):
        extra = sorted((Counter(words(v["a"])) - Counter(words(v["b"]))).elements())
        missing = sorted((Counter(words(v["b"])) - Counter(words(v["a"]))).elements())
        return False, ("The sentences must use exactly the same words: "
                       f"only in a: {extra or 'none'}; only in b: {missing or 'none'}."), {}
    if words(v["a"]) == words(v["b"]):
        return False, "The words are in the same order: reorder them.", {}
    ra, rb = models.sentiment([v["a"], v["b"]])
    ev = _labelled([ra, rb])
    if ra["label"] != rb["label"]:
        return True, (f"Same words, different order, different label: a is {ra['label']} ({ra['score']:.3f}), "
                      f"b is {rb['label']} ({rb['score']:.3f})."), ev
    return False, f"Both get {ra['label']} (a {ra['score']:.3f}, b {rb['score']:.3f}).", ev


def tokenizers_disagree(v: dict):
    """Chapter 2: WordPiece and byte-level BPE count the same text's tokens at least 5 apart."""
    wp, _, _ = models.pieces("encoder", v["text"])
    bpe, _, _ = models.pieces("decoder", v["text"])
    gap = abs(len(wp) - len(bpe))
    ev = {"wordpiece": {"count": len(wp), "tokens": wp[:80]}, "byte_level_bpe": {"count": len(bpe), "tokens": bpe[:80]},
          "difference": gap}
    if gap >= 5:
        more = "WordPiece" if len(wp) > len(bpe) else "byte-level BPE"
        return True, f"WordPiece {len(wp)} tokens, byte-level BPE {len(bpe)}: {more} needs {gap} more.", ev
    return False, f"WordPiece {len(wp)} tokens, byte-level BPE {len(bpe)}: only {gap} apart (needs 5).", ev


def unknown_to_wordpiece(v: dict):
    """Chapter 2: WordPiece has no piece for something in the text ([UNK]); byte-level BPE reads it back."""
    wp, _, _ = models.pieces("encoder", v["text"])
    unk = models.unk_token("encoder")
    _, _, back = models.pieces("decoder", v["text"])
    unknown = [i for i, t in enumerate(wp) if t == unk]
    ev = {"wordpiece": wp[:80], "unknown_at": unknown, "byte_level_bpe_decoded": back,
          "bpe_round_trip": back == v["text"]}
    if unknown and back == v["text"]:
        return True, (f"WordPiece turned {len(unknown)} piece(s) into {unk}, and byte-level BPE decodes the text "
                      "back exactly: bytes never run out of pieces."), ev
    if not unknown:
        return False, f"WordPiece has a piece for everything in this text: no {unk}.", ev
    return False, "Byte-level BPE did not decode the text back exactly.", ev


def unseen_word(v: dict):
    """Chapter 10: a corpus without the word 'lowest' on which BPE (30 merges) splits it into 'low' + 'est'."""
    from backend.engines.scratch import bpe

    if UNSEEN in words(v["corpus"]):
        return False, f"The corpus contains '{UNSEEN}' itself: the point is a word BPE has never seen.", {}
    merges = _merges(v["corpus"], UNSEEN_MERGES)
    pieces = bpe.encode_word(UNSEEN, merges)
    ev = {"word": UNSEEN, "pieces": pieces, "merges": [m[2] for m in merges]}
    if pieces == list(UNSEEN_SPLIT):
        return True, (f"BPE never saw '{UNSEEN}' yet splits it into {' + '.join(UNSEEN_SPLIT)}: pieces it learned "
                      "from other words."), ev
    return False, f"BPE splits '{UNSEEN}' into {pieces}, not {list(UNSEEN_SPLIT)}.", ev


UNSEEN, UNSEEN_SPLIT, UNSEEN_MERGES = "lowest", ("low", "est"), 30


def first_merge(v: dict):
    """Chapter 10: a corpus whose BPE, trained from scratch, merges ('x', 'y') first."""
    from backend.engines.scratch import bpe

    merges = _merges(v["corpus"], 1)
    if not merges:
        return False, "The corpus has no pair of characters to merge.", {}
    got = tuple(merges[0][0])
    ev = {"first_merge": list(got), "wanted": list(FIRST_PAIR), "pair_counts": _top_pairs(v["corpus"], bpe)}
    if tuple(got) == FIRST_PAIR:
        return True, f"The first merge is {FIRST_PAIR[0]!r} + {FIRST_PAIR[1]!r}: your corpus's most frequent pair.", ev
    return False, f"The first merge is {got[0]!r} + {got[1]!r}, not {FIRST_PAIR[0]!r} + {FIRST_PAIR[1]!r}.", ev


FIRST_PAIR = ("x", "y")


def _merges(corpus: str, n: int) -> list:
    from backend.engines.scratch import bpe

    return bpe.train(dict(bpe.words_of(corpus)), vocab_size=10_000, max_merges=n)[1]


def _top_pairs(corpus: str, bpe, n: int = 5) -> list:
    stats = bpe.get_stats({tuple(w): c for w, c in bpe.words_of(corpus).items()})
    return [[a, b, c] for (a, b), c in stats.most_common(n)]


def one_token_word(v: dict):
    """Chapter 10: a corpus on which a small BPE (40 merges) encodes 'transformer' as one token."""
    from backend.engines.scratch import bpe

    merges = _merges(v["corpus"], WORD_MERGES)
    pieces = bpe.encode_word(WORD, merges)
    ev = {"word": WORD, "pieces": pieces, "merges": len(merges)}
    if len(pieces) == 1:
        return True, f"After {len(merges)} merges, '{WORD}' is one token.", ev
    return False, f"After {len(merges)} merges, '{WORD}' is still {len(pieces)} pieces: {pieces}.", ev


WORD, WORD_MERGES = "transformer", 40
