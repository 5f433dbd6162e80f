"""The From scratch tab's tokenizer part: train one (chapter 10) and watch what it learned.

`train_tokenizer` returns plain data: the first merges in order with their counts (or, for
Unigram, its most probable pieces), the vocabulary's length distribution, a timeline of how a
sentence splits after the first N steps, tokens per word against the app's own tokenizers,
and whether the from-scratch BPE (`bpe.py`) learned the same merges as the library here.
"""

from __future__ import annotations

import inspect

from backend.engines.scratch import bpe, corpora, train
from backend.engines.scratch.run_settings import SHOWN_MERGES
from backend.runtime import budget
from backend.runtime.errors import InputError, LabError
from backend.runtime.validation import as_int, check_text, one_of
from backend.scratch import replay

MIN_VOCAB, MAX_VOCAB = 100, 8000
MAX_SENTENCE = 1000
COMPARE_CHARS = 20_000  # tokens per word is measured on the corpus's first 20,000 characters
REAL = (("embedder", "WordPiece of the embedder"), ("decoder", "byte-level BPE of the decoder"))
DEFAULT_SENTENCE = "The tokenizer learns its merges from the training text."
COUNTS = ("merge counts: recounted by replaying the library's merges on the corpus's word counts "
          "(the library does not report them)")
NOTES = {
    "BPE": [COUNTS, "scratch_check: the from-scratch BPE trained on the same words, merge for merge"],
    "WordPiece": [
        "The library's WordPiece trainer is its BPE trainer with '##' on word continuations; the WordPiece "
        "model keeps only the vocabulary, whose ids follow the merges, so the merges are rebuilt from that "
        "order: " + COUNTS,
        "scratch_check compares the from-scratch BPE with the library's BPE trainer on the same text: the "
        "WordPiece trainer numbers its '##' characters in hash order, which changes from run to run, so its "
        "ties (and sometimes its vocabulary) differ between two runs on the same text"],
    "Unigram": ["Unigram has no merges: its pieces are listed by log-probability; step N of the replay keeps "
                "the N most probable pieces and every character",
                "scratch_check compares the from-scratch BPE with the library's BPE trainer on the same text"],
}


def scratch_source() -> str:
    """The from-scratch BPE, as the tab shows it."""
    return inspect.getsource(bpe)


def _sentence(sentence) -> str:
    text = check_text(DEFAULT_SENTENCE if sentence is None else sentence, "text", "sentence")
    if len(text) > MAX_SENTENCE:
        raise InputError(f"The sentence is {len(text):,} characters long; at most {MAX_SENTENCE:,} are allowed "
                         "for the replay. Shorten it.")
    return text


def _learned(algorithm: str, tok) -> tuple[dict, list[dict], int]:
    """(what replay needs, the first merges or pieces as table rows, how many steps there are)."""
    vocab = tok.get_vocab()
    alphabet = sorted(t for t in vocab if t != train.UNK and train.is_alphabet(t))
    if algorithm == "Unigram":
        pieces = train.unigram_pieces(tok)
        chars = {p: float(s) for p, s in train.model_json(tok)["vocab"] if len(p) == 1}
        rows = [{"rank": i + 1, "piece": p, "log_prob": round(s, 4)} for i, (p, s) in enumerate(pieces[:SHOWN_MERGES])]
        return {"pieces": pieces, "chars": chars}, rows, len(pieces)
    if algorithm == "BPE":
        merges = train.bpe_merges(tok)
        return {"merges": merges, "alphabet": alphabet}, [], len(merges)
    new_tokens = train.wordpiece_new_tokens(tok)
    return {"new_tokens": new_tokens, "alphabet": alphabet}, [], len(new_tokens)


def tokens_per_word(tok, sentence: str, sample: str, roles=REAL) -> list[dict]:
    """Tokens per word (whitespace-separated) on the sentence and on the corpus sample, for the
    trained tokenizer and each role's real tokenizer (no special tokens counted)."""
    def ratio(count: int, text: str):
        words = len(text.split())
        return round(count / words, 3) if words else None

    rows = [{"tokenizer": "trained here", "what": "the tokenizer you just trained", "vocab_size": tok.get_vocab_size(),
             "sentence": ratio(len(tok.encode(sentence).ids), sentence),
             "corpus": ratio(len(tok.encode(sample).ids), sample)}]
    from backend.hub import tokenizer as hub_tokenizer

    for role, what in roles:
        budget.check("measured tokens per word")
        try:
            real, resolved = hub_tokenizer(role)
        except LabError as exc:  # a missing model fails only its own row
            rows.append({"tokenizer": role, "what": what, "error": str(exc)})
            continue
        count = lambda text: _count(real, text)  # noqa: E731
        rows.append({"tokenizer": resolved.checkpoint, "what": what, "role": role, "vocab_size": len(real),
                     "sentence": ratio(count(sentence), sentence), "corpus": ratio(count(sample), sample)})
    return rows


def _count(real, text: str) -> int:
    """Tokens a transformers tokenizer makes of a text, line by line (no model-length warning)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return sum(len(ids) for ids in real(lines, add_special_tokens=False)["input_ids"]) if lines else 0


def train_tokenizer(algorithm: str = "BPE", vocab_size=1000, corpus: str = "tokenizers", text: str | None = None,
                    upload=None, sentence: str | None = DEFAULT_SENTENCE, compare: bool = True) -> dict:
    """/train_tokenizer: train, then everything the tab shows, as plain data."""
    algorithm = one_of("algorithm", algorithm, train.ALGORITHMS, default="BPE")
    vocab_size = as_int("vocab_size", vocab_size, lo=MIN_VOCAB, hi=MAX_VOCAB)
    sentence = _sentence(sentence)
    what, body = corpora.corpus_text(corpus, text, upload)
    with budget.scope():
        tok, seconds = train.timed_train(algorithm, body, vocab_size)
        budget.check("trained the tokenizer")
        word_counts = bpe.words_of(body)
        learned, rows, steps = _learned(algorithm, tok)
        if algorithm == "BPE":
            library_merges = learned["merges"]
            rows = train.merges_with_counts(word_counts, library_merges, SHOWN_MERGES)
        else:
            if algorithm == "WordPiece":
                rows = train.wordpiece_merges_with_counts(word_counts, learned["new_tokens"], SHOWN_MERGES)
            library_merges = train.bpe_merges(train.train_library("BPE", body, vocab_size))
        check = train.scratch_check(word_counts, library_merges, vocab_size)
        timeline = replay.timeline(sentence, algorithm, learned)
        vocab = tok.get_vocab()
        sample = body[:COMPARE_CHARS]
        return {
            "algorithm": algorithm,
            "vocab_size": {"asked": vocab_size, "learned": len(vocab)},
            "corpus": {"what": what, "chars": len(body), "words": sum(word_counts.values()),
                       "distinct_words": len(word_counts)},
            "seconds": round(seconds, 3),
            "steps": steps,
            "step_kind": "pieces" if algorithm == "Unigram" else "merges",
            "merges": rows if algorithm != "Unigram" else [],
            "pieces": rows if algorithm == "Unigram" else [],
            "alphabet_size": sum(1 for t in vocab if t != train.UNK and train.is_alphabet(t)),
            "lengths": train.length_distribution(vocab),
            "replay": {"sentence": sentence, "timeline": timeline},
            "tokens_per_word": tokens_per_word(tok, sentence, sample) if compare else [],
            "scratch_check": check,
            "notes": NOTES[algorithm],
        }
