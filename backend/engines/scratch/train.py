"""Train a tokenizer with the `tokenizers` library (chapter 10) and read what it learned.

The library trains BPE and WordPiece by merging pairs but does not report how often each
merged pair occurred; `merges_with_counts` recounts them by replaying the library's own merges
on the corpus's word counts (the count of a pair just before it is merged). `scratch_check`
trains the from-scratch BPE (`bpe.py`) on the same words and compares merge for merge.
"""

from __future__ import annotations

import json
import time

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from backend.engines.scratch import bpe
from backend.runtime import budget
from backend.runtime.errors import InputError

ALGORITHMS = ("BPE", "WordPiece", "Unigram")
UNK = "[UNK]"
PREFIX = "##"  # WordPiece's mark on a piece that continues a word
CHECK_WORK = 5_000_000  # symbols x merges the from-scratch check may walk (1-2 s on a busy 2-core CPU)
CHECK_MAX, CHECK_MIN = 300, 20


def train_library(algorithm: str, text: str, vocab_size: int) -> Tokenizer:
    """The library's tokenizer: no normalizer, the Whitespace pre-tokenizer, one special token."""
    if algorithm == "BPE":
        tok, trainer = Tokenizer(models.BPE(unk_token=UNK)), trainers.BpeTrainer
    elif algorithm == "WordPiece":
        tok, trainer = Tokenizer(models.WordPiece(unk_token=UNK)), trainers.WordPieceTrainer
    elif algorithm == "Unigram":
        tok = Tokenizer(models.Unigram())
        trainer = lambda **kw: trainers.UnigramTrainer(unk_token=UNK, **kw)  # noqa: E731
    else:
        raise InputError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}.")
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    try:
        tok.train_from_iterator(text.splitlines(), trainer(vocab_size=vocab_size, special_tokens=[UNK],
                                                           show_progress=False))
    except Exception as exc:  # the Unigram trainer refuses some small texts
        raise InputError(f"The {algorithm} trainer could not learn a vocabulary of {vocab_size:,} from this "
                         f"text ({exc}). Use more text or a smaller vocabulary size.") from None
    return tok


def timed_train(algorithm: str, text: str, vocab_size: int) -> tuple[Tokenizer, float]:
    start = time.perf_counter()
    tok = train_library(algorithm, text, vocab_size)
    return tok, time.perf_counter() - start


def model_json(tok: Tokenizer) -> dict:
    return json.loads(tok.to_str())["model"]


def bpe_merges(tok: Tokenizer) -> list[tuple[str, str]]:
    """The library BPE's merges, in the order learned."""
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in model_json(tok)["merges"]]


def is_alphabet(token: str) -> bool:
    return len(token) == 1 or (token.startswith(PREFIX) and len(token) == len(PREFIX) + 1)


def wordpiece_new_tokens(tok: Tokenizer) -> list[str]:
    """WordPiece keeps no merges, only a vocabulary whose ids follow the order of the merges
    that made them (after the special tokens, the characters and the '##' characters)."""
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    return [t for t, _ in vocab if t != UNK and not is_alphabet(t)]


def unigram_pieces(tok: Tokenizer) -> list[tuple[str, float]]:
    """Unigram's pieces longer than one character, most probable first (log-probabilities)."""
    pieces = [(p, float(s)) for p, s in model_json(tok)["vocab"] if p != UNK and len(p) > 1]
    return sorted(pieces, key=lambda ps: -ps[1])


def _start(word: str, prefix: str | None) -> tuple:
    return tuple(c if i == 0 or not prefix else prefix + c for i, c in enumerate(word))


def _glue(a: str, b: str, prefix: str | None) -> str:
    return a + (b[len(prefix):] if prefix and b.startswith(prefix) else b)


def _pair_count(words: dict, pair: tuple) -> int:
    return sum(n * sum(1 for p in zip(w, w[1:]) if p == pair) for w, n in words.items() if pair[0] in w)


def merges_with_counts(word_counts: dict, merges: list[tuple[str, str]], limit: int) -> list[dict]:
    """The first `limit` BPE merges with the count of their pair just before each was merged."""
    words = {_start(w, None): n for w, n in word_counts.items()}
    rows = []
    for rank, pair in enumerate(merges[:limit]):
        budget.check(f"recounted {rank} merges")
        new = pair[0] + pair[1]
        rows.append({"rank": rank + 1, "left": pair[0], "right": pair[1], "count": _pair_count(words, pair),
                     "token": new})
        words = {bpe.merge(w, pair, new): n for w, n in words.items()}
    return rows


def wordpiece_merges_with_counts(word_counts: dict, new_tokens: list[str], limit: int) -> list[dict]:
    """WordPiece's first merges, rebuilt from its vocabulary order: at each step, of the pairs
    that glue into the next new token, the most frequent (the trainer is BPE's, with '##')."""
    words = {_start(w, PREFIX): n for w, n in word_counts.items()}
    rows = []
    for rank, token in enumerate(new_tokens[:limit]):
        budget.check(f"recounted {rank} merges")
        counts: dict[tuple, int] = {}
        for w, n in words.items():
            for p in zip(w, w[1:]):
                if token.startswith(p[0]) and _glue(p[0], p[1], PREFIX) == token:
                    counts[p] = counts.get(p, 0) + n
        if not counts:
            break  # made from a pair that no longer occurs (a duplicate merge): stop the table here
        pair = max(counts, key=counts.get)
        rows.append({"rank": rank + 1, "left": pair[0], "right": pair[1], "count": counts[pair], "token": token})
        words = {bpe.merge(w, pair, token): n for w, n in words.items()}
    return rows


def length_distribution(vocab: dict[str, int]) -> dict:
    """How many tokens of each length (characters, '##' not counted); the special tokens apart."""
    lengths: dict[int, int] = {}
    special = 0
    for token in vocab:
        if token == UNK:
            special += 1
            continue
        n = len(token[len(PREFIX):] if token.startswith(PREFIX) and len(token) > len(PREFIX) else token)
        lengths[n] = lengths.get(n, 0) + 1
    return {"lengths": [{"length": k, "tokens": lengths[k]} for k in sorted(lengths)],
            "special": special, "total": sum(lengths.values()) + special}


def check_merges(word_counts: dict) -> int:
    """How many merges the from-scratch check can replay on this corpus within its work budget."""
    symbols = sum(len(w) for w in word_counts)
    return max(CHECK_MIN, min(CHECK_MAX, CHECK_WORK // max(1, symbols)))


def scratch_check(word_counts: dict, library_merges: list[tuple[str, str]], vocab_size: int) -> dict:
    """Train the from-scratch BPE on the same words and compare its merges with the library's."""
    limit = min(len(library_merges), check_merges(word_counts))
    start = time.perf_counter()
    _, ours = bpe.train(word_counts, vocab_size, specials=(UNK,), max_merges=limit)
    seconds = time.perf_counter() - start
    theirs = [tuple(p) for p in library_merges[:limit]]
    mine = [tuple(p) for p, _, _ in ours]
    first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), None)
    if first is None and len(mine) != len(theirs):
        first = min(len(mine), len(theirs))
    out = {"checked": limit, "library_merges": len(library_merges), "identical": first is None,
           "seconds": round(seconds, 3)}
    if first is not None:
        out["first_difference"] = {"rank": first + 1, "scratch": list(mine[first]) if first < len(mine) else None,
                                   "library": list(theirs[first]) if first < len(theirs) else None}
    return out
