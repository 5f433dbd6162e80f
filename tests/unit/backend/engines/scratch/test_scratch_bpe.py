"""The from-scratch BPE against the `tokenizers` library's BpeTrainer: the same merges, in order.

The library breaks a tie in counts by the lower pair of ids (special tokens first, then the
characters by code point, then merged tokens in the order made); `bpe.best_pair` does the same,
so equality is tested on texts full of ties too, not only on texts without them.
"""

from __future__ import annotations

import random

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from backend.engines.scratch import bpe, corpora, train

UNK = train.UNK


def library_bpe(text: str, vocab_size: int) -> tuple[list[tuple[str, str]], dict]:
    tok = train.train_library("BPE", text, vocab_size)
    return train.bpe_merges(tok), tok.get_vocab()


def invented_text(seed: int, words: int = 3000) -> str:
    """Text no tokenizer has seen: pseudo-words from a few syllables, Zipf-ish frequencies."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "tre", "su", "ng", "ba", "x", "é", "qu", "ar", "on"]
    lexicon = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(400)]
    weights = [1 / (i + 1) for i in range(len(lexicon))]
    return " ".join(rng.choices(lexicon, weights, k=words)) + " , . ; 42 1999"


TEXTS = {
    "essay": lambda: corpora.shipped("tokenizers"),
    "glossary": lambda: corpora.shipped("glossary")[:25_000],
    "sentences": lambda: corpora.shipped("sentences")[-25_000:],
    "invented-1": lambda: invented_text(1),
    "invented-2": lambda: invented_text(2),
}
CASES = [("essay", 150), ("essay", 400), ("glossary", 300), ("glossary", 700), ("sentences", 500),
         ("invented-1", 200), ("invented-2", 350)]


@pytest.mark.parametrize("name,vocab_size", CASES)
def test_scratch_bpe_learns_the_library_merges_exactly(name, vocab_size):
    text = TEXTS[name]()
    theirs, their_vocab = library_bpe(text, vocab_size)
    vocab, ours = bpe.train(bpe.words_of(text), vocab_size)
    assert [p for p, _, _ in ours] == theirs  # every merge, in order
    assert vocab == their_vocab  # same tokens with the same ids
    assert len(theirs) > 50


def test_ties_are_broken_as_the_library_breaks_them():
    """Every pair occurs once: only the tie rule decides the order (by ids, not by text order)."""
    text = "zy xw vu ts rq po nm lk ji hg fe dc ba"
    theirs, _ = library_bpe(text, 200)
    _, ours = bpe.train(bpe.words_of(text), 200)
    assert [p for p, _, _ in ours] == theirs
    assert theirs[0] == ("b", "a")  # the lowest ids, though "zy" comes first in the text
    assert all(count == 1 for _, count, _ in ours)


def test_a_different_tie_rule_is_caught(monkeypatch):
    """The equality test can fail: a trainer that breaks ties the other way learns other merges."""
    text = "zy xw vu ts rq po nm lk ji hg fe dc ba"
    theirs, _ = library_bpe(text, 200)
    monkeypatch.setattr(bpe, "best_pair", lambda stats, ids: max(stats, key=lambda p: (stats[p], ids[p[0]], ids[p[1]])))
    _, ours = bpe.train(bpe.words_of(text), 200)
    assert [p for p, _, _ in ours] != theirs


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_pre_tokenizer_regex_is_the_libraries(name):
    text = TEXTS[name]()[:5000]
    lib = [w for w, _ in pre_tokenizers.Whitespace().pre_tokenize_str(text)]
    assert bpe.WORD.findall(text) == lib


def test_the_counts_are_the_pair_counts_at_merge_time():
    text = "low low low low lower lower newest newest newest widest"
    _, ours = bpe.train(bpe.words_of(text), 40)
    # Sennrich et al.'s example: ('l','o') and ('o','w') both occur 4 + 2 = 6 times; 'l' has the lower id.
    assert ours[0] == (("l", "o"), 6, "lo")
    assert ours[1] == (("lo", "w"), 6, "low")
    lib_merges, _ = library_bpe(text, 40)
    rows = train.merges_with_counts(bpe.words_of(text), lib_merges, 50)
    assert [(r["left"], r["right"]) for r in rows] == [p for p, _, _ in ours]
    assert [r["count"] for r in rows] == [c for _, c, _ in ours]


@pytest.mark.parametrize("n", [0, 1, 5, 40, 150, 10_000])
def test_encode_after_n_merges_is_the_library_bpe_with_those_merges(n):
    text = corpora.shipped("tokenizers")
    merges, vocab = library_bpe(text, 400)
    sentence = "Unbelievable: tokenizers learn merges, then split new words the same way."
    library = Tokenizer(models.BPE(vocab=vocab, merges=merges[:n], unk_token=UNK))
    library.pre_tokenizer = pre_tokenizers.Whitespace()
    assert bpe.encode(sentence, [(tuple(m), 0, "") for m in merges[:n]]) == library.encode(sentence).tokens


def test_decode_glues_the_tokens_back():
    merges = bpe.train(bpe.words_of("hello hello help"), 30)[1]
    assert bpe.decode(bpe.encode("hello", merges)) == "hello"
    assert bpe.encode_word("hello", merges) == ["hello"]


def test_the_recounted_counts_of_the_library_merges_are_the_scratch_counts():
    text = corpora.shipped("glossary")[:25_000]
    lib_merges, _ = library_bpe(text, 400)
    rows = train.merges_with_counts(bpe.words_of(text), lib_merges, 50)
    _, ours = bpe.train(bpe.words_of(text), 400, max_merges=50)
    assert [(r["left"], r["right"], r["count"], r["token"]) for r in rows] == [(*p, c, t) for p, c, t in ours]
