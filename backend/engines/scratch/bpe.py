"""Byte-pair encoding from scratch, in the style of Karpathy's minbpe: read this one.

BPE starts from single characters and, again and again, glues together the pair of
neighbouring tokens that occurs most often in the training text; each glue is a *merge*, and
the list of merges, in order, is the tokenizer. To split new text, apply the same merges in
the same order. (The book's chapter 10 trains one with the `tokenizers` library; this is
what that library does, without its speed-ups.)

Words never merge across each other: the text is first cut into words (the pre-tokenizer),
and each distinct word is kept once with its count, so a pair in a word seen 40 times counts
40. `train` matches the `tokenizers` library's `BpeTrainer` (whitespace pre-tokenizer, no
normalizer) merge for merge, ties included: among equally frequent pairs the library takes
the one whose tokens entered the vocabulary first (lowest ids), and so does `best_pair`.
"""

from __future__ import annotations

from collections import Counter

import regex

# The library's `Whitespace` pre-tokenizer: `\w+|[^\w\s]+` as its Rust regex server reads it,
# where a word character is a letter, a combining mark (Mn/Mc/Me: the accent of "cafe\u0301",
# Devanagari vowel signs) or a decimal digit, but not a superscript ("x²" is "x", "²"). Python's
# `re` reads `\w` the other way round on both counts, so the `regex` module (Unicode's own
# definition of a word character) is used. Checked over every code point: identical on all
# characters assigned by Unicode 14; the two disagree only on some characters added since.
WORD = regex.compile(r"\w+|[^\w\s]+")


def words_of(text: str) -> Counter:
    """Each distinct word of the text with how often it occurs."""
    return Counter(WORD.findall(text))


def get_stats(words: dict[tuple, int]) -> Counter:
    """How often each pair of neighbouring tokens occurs, counting every word by its count."""
    stats = Counter()
    for word, count in words.items():
        for pair in zip(word, word[1:]):
            stats[pair] += count
    return stats


def merge(word: tuple, pair: tuple, new: str) -> tuple:
    """Replace every occurrence of `pair` in one word by the token `new`, left to right."""
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def best_pair(stats: Counter, ids: dict[str, int]) -> tuple:
    """The most frequent pair; on a tie, the one whose tokens got their ids first."""
    return max(stats, key=lambda p: (stats[p], -ids[p[0]], -ids[p[1]]))


def train(word_counts: dict[str, int], vocab_size: int, specials=("[UNK]",), max_merges: int | None = None):
    """Learn merges until the vocabulary has `vocab_size` tokens (specials + characters + merges).

    Returns (vocab: token -> id, merges: [((left, right), count when merged, new token)]).
    """
    ids = {tok: i for i, tok in enumerate(specials)}
    for ch in sorted({c for w in word_counts for c in w}):  # the alphabet, by code point
        ids.setdefault(ch, len(ids))
    words = {tuple(w): n for w, n in word_counts.items()}
    merges = []
    while len(ids) < vocab_size and (max_merges is None or len(merges) < max_merges):
        stats = get_stats(words)
        if not stats:
            break  # every word is a single token: nothing left to merge
        pair = best_pair(stats, ids)
        new = pair[0] + pair[1]
        ids.setdefault(new, len(ids))
        merges.append((pair, stats[pair], new))
        words = {merge(w, pair, new): n for w, n in words.items()}
    return ids, merges


def encode_word(word: str, merges: list) -> list[str]:
    """Split one word: apply the merges, earliest learned first, until none applies."""
    rank = {pair: i for i, (pair, *_rest) in enumerate(merges)}
    tokens = list(word)
    while len(tokens) > 1:
        pairs = set(zip(tokens, tokens[1:]))
        pair = min(pairs, key=lambda p: rank.get(p, float("inf")))
        if pair not in rank:
            break
        tokens = list(merge(tuple(tokens), pair, pair[0] + pair[1]))
    return tokens


def encode(text: str, merges: list) -> list[str]:
    """Split a text: cut it into words, then split each word with the merges."""
    return [tok for word in WORD.findall(text) for tok in encode_word(word, merges)]


def decode(tokens: list[str]) -> str:
    """Tokens back to text. These tokens do not record spaces (the pre-tokenizer dropped them),
    so words come back glued; byte-level BPE (GPT-2, SmolLM2) keeps the space inside the token."""
    return "".join(tokens)
