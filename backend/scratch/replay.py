"""How a sentence splits after the first N steps of training, for every N at once.

A split changes only at a step whose new token occurs inside one of the sentence's words, so
the timeline lists the split at step 0 and at each step where it changes; the split after N
steps is the last entry at or before N (`split_after`).

- BPE: apply the first N merges (lowest rank first), as `bpe.encode_word` does.
- WordPiece: the vocabulary after N merges, split greedily longest piece first, like BERT.
- Unigram has no merges: step N keeps its N most probable pieces (and every character), and
  the split is the most probable one under those pieces (Viterbi, by the library's model).
"""

from __future__ import annotations

from tokenizers import models

from backend.engines.scratch import bpe
from backend.engines.scratch.train import PREFIX, UNK
from backend.runtime import budget

START, CONTINUES, UNKNOWN = "word start", "continuation", "unknown"


def _bpe_word(word: str, rank: dict, n: int, alphabet: set) -> list[tuple[str, str]]:
    tokens = list(word)
    while len(tokens) > 1:
        pairs = [(rank.get(p, n), p) for p in zip(tokens, tokens[1:])]
        r, pair = min(pairs)
        if r >= n:
            break
        tokens = list(bpe.merge(tuple(tokens), pair, pair[0] + pair[1]))
    return [(UNK, UNKNOWN) if len(t) == 1 and t not in alphabet else (t, START if i == 0 else CONTINUES)
            for i, t in enumerate(tokens)]


def wordpiece_word(word: str, vocab: set, max_chars: int = 100) -> list[tuple[str, str]]:
    """Greedy longest-match-first: the longest vocabulary piece at the start, then of the rest
    ('##' marks the rest); a word with no split at all becomes [UNK], as in BERT."""
    if len(word) > max_chars:
        return [(UNK, UNKNOWN)]
    out, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else PREFIX + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return [(UNK, UNKNOWN)]
        out.append((piece, START if start == 0 else CONTINUES))
        start = end
    return out


def _unigram_word(word: str, pieces: list[tuple[str, float]], chars: dict[str, float]) -> list[tuple[str, str]]:
    vocab = [(UNK, 0.0)] + list(chars.items()) + [p for p in pieces if p[0] not in chars]
    model = models.Unigram(vocab, 0, False)
    return [(t.value, UNKNOWN if t.id == 0 else (START if i == 0 else CONTINUES))
            for i, t in enumerate(model.tokenize(word))]


def _steps_touching(words: list[str], new_tokens: list[str]) -> list[int]:
    """The steps (1-based) whose new token occurs in one of the words."""
    return [i + 1 for i, t in enumerate(new_tokens)
            if any(t.removeprefix(PREFIX) in w for w in words) and len(t.removeprefix(PREFIX)) > 0]


def timeline(sentence: str, algorithm: str, learned: dict) -> list[dict]:
    """[{"after": N, "new_token": step N's token, "tokens": [[token, kind], ...]}] at step 0 and at
    every step that changes the split.

    `learned`: "merges" [(left, right)] for BPE; "new_tokens" and "alphabet" for WordPiece;
    "pieces" [(piece, log-prob)] and "chars" {char: log-prob} for Unigram.
    """
    words = bpe.WORD.findall(sentence)
    if algorithm == "BPE":
        merges = learned["merges"]
        rank = {tuple(p): i for i, p in reversed(list(enumerate(merges)))}
        alphabet = set(learned["alphabet"])
        made = [a + b for a, b in merges]
        steps = _steps_touching(words, made)
        split = lambda n: [t for w in words for t in _bpe_word(w, rank, n, alphabet)]  # noqa: E731
    elif algorithm == "WordPiece":
        order = made = learned["new_tokens"]
        steps = _steps_touching(words, order)
        base = set(learned["alphabet"])
        split = lambda n: [t for w in words for t in wordpiece_word(w, base | set(order[:n]))]  # noqa: E731
    else:
        pieces = learned["pieces"]
        made = [p for p, _ in pieces]
        steps = _steps_touching(words, made)
        useful = [(i, p) for i, p in enumerate(pieces) if any(p[0] in w for w in words)]
        split = lambda n: [t for w in words for t in _unigram_word(  # noqa: E731
            w, [p for i, p in useful if i < n], learned["chars"])]
    out, last = [], None
    for n in [0] + steps:
        budget.check(f"replayed the sentence to step {n}")
        tokens = [list(t) for t in split(n)]
        if tokens != last:
            out.append({"after": n, "new_token": made[n - 1] if n else None, "tokens": tokens})
            last = tokens
    return out


def split_after(timeline_rows: list[dict], n: int) -> dict:
    """The timeline's entry in force after `n` steps."""
    current = timeline_rows[0]
    for row in timeline_rows:
        if row["after"] > n:
            break
        current = row
    return current
