"""The From scratch tab's tokenizer training: replay, distributions, checks, hostile input."""

from __future__ import annotations

import math

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from backend.engines.scratch import bpe, corpora, train
from backend.runtime.errors import InputError
from backend.scratch import api, replay, split_after, train_tokenizer

SENTENCE = "Tokenizers learn unbelievable merges; WordPiece splits greedily! \u00a7"  # '§' is in no corpus


def run(algorithm="BPE", vocab_size=300, corpus="tokenizers", **kw):
    kw.setdefault("sentence", SENTENCE)
    return train_tokenizer(algorithm, vocab_size, corpus, compare=False, **kw)


@pytest.fixture(scope="module", params=train.ALGORITHMS)
def result(request):
    return run(request.param, 400, "glossary")


def _tokens(row):
    return [t for t, _ in row["tokens"]]


def test_the_length_distribution_sums_to_the_vocabulary(result):
    lengths = result["lengths"]
    assert lengths["total"] == result["vocab_size"]["learned"]
    assert sum(r["tokens"] for r in lengths["lengths"]) + lengths["special"] == lengths["total"]
    assert lengths["special"] == 1 and lengths["lengths"][0]["length"] == 1


def test_the_replay_starts_from_characters_and_ends_at_the_trained_split(result):
    rows = result["replay"]["timeline"]
    assert rows[0]["after"] == 0
    words = bpe.WORD.findall(SENTENCE)
    first = _tokens(rows[0])
    assert len(first) == sum(len(w) for w in words)  # one token per character before any step
    assert [r["after"] for r in rows] == sorted({r["after"] for r in rows})
    assert all(_tokens(a) != _tokens(b) for a, b in zip(rows, rows[1:]))  # an entry only where the split changes
    assert all(r["new_token"] in _tokens(r) for r in rows[1:])  # a step changes the split only by being used
    if result["algorithm"] == "BPE":  # a merge only ever glues: the count falls at every change
        assert all(len(_tokens(a)) > len(_tokens(b)) for a, b in zip(rows, rows[1:]))
    last = split_after(rows, result["steps"])
    assert last is rows[-1] and len(rows) > 3


def _trained(algorithm, vocab_size=400):
    return train.train_library(algorithm, corpora.shipped("glossary"), vocab_size)


def test_the_last_replay_step_is_the_trained_tokenizer():
    for algorithm in train.ALGORITHMS:
        tok = _trained(algorithm)
        learned, _, steps = api._learned(algorithm, tok)
        rows = replay.timeline(SENTENCE, algorithm, learned)
        assert _tokens(split_after(rows, steps)) == tok.encode(SENTENCE).tokens, algorithm


@pytest.mark.parametrize("n", [0, 3, 17, 60, 200, 399])
def test_bpe_replay_after_n_is_the_first_n_merges_applied(n):
    tok = _trained("BPE")
    learned, _, _ = api._learned("BPE", tok)
    merges = learned["merges"]
    got = _tokens(split_after(replay.timeline(SENTENCE, "BPE", learned), n))
    vocab = tok.get_vocab()
    scratch = bpe.encode(SENTENCE, [(m, 0, "") for m in merges[:n]])
    assert got == [t if t in vocab else train.UNK for t in scratch]  # a character never seen is unknown
    library = Tokenizer(models.BPE(vocab=vocab, merges=merges[:n], unk_token=train.UNK))
    library.pre_tokenizer = pre_tokenizers.Whitespace()
    assert got == library.encode(SENTENCE).tokens


@pytest.mark.parametrize("n", [0, 10, 100, 300])
def test_wordpiece_replay_after_n_is_the_library_wordpiece_with_that_vocabulary(n):
    tok = _trained("WordPiece")
    learned, _, _ = api._learned("WordPiece", tok)
    vocab = {t: i for i, t in enumerate([train.UNK] + learned["alphabet"] + learned["new_tokens"][:n])}
    library = Tokenizer(models.WordPiece(vocab=vocab, unk_token=train.UNK))
    library.pre_tokenizer = pre_tokenizers.Whitespace()
    got = _tokens(split_after(replay.timeline(SENTENCE, "WordPiece", learned), n))
    assert got == library.encode(SENTENCE).tokens


def test_wordpiece_merges_glue_into_the_vocabulary_in_order():
    tok = _trained("WordPiece")
    new_tokens = train.wordpiece_new_tokens(tok)
    rows = train.wordpiece_merges_with_counts(bpe.words_of(corpora.shipped("glossary")), new_tokens, 50)
    assert [r["token"] for r in rows] == new_tokens[:50]
    for r in rows:
        assert r["left"] + r["right"].removeprefix("##") == r["token"] and r["count"] > 0


def test_unigram_lists_pieces_by_probability():
    r = run("Unigram", 400, "glossary")
    assert r["merges"] == [] and len(r["pieces"]) == 50 and r["step_kind"] == "pieces"
    probs = [p["log_prob"] for p in r["pieces"]]
    assert probs == sorted(probs, reverse=True) and all(p < 0 for p in probs)


def test_the_result_says_the_scratch_bpe_matched_and_can_say_it_did_not(monkeypatch):
    r = run("BPE", 300)
    check = r["scratch_check"]
    assert check["identical"] and check["checked"] == check["library_merges"] == r["steps"]
    assert r["merges"][0]["count"] >= r["merges"][1]["count"] > 0
    library = train.bpe_merges(train.train_library("BPE", corpora.shipped("tokenizers"), 300))
    planted = library[:5] + [library[6], library[5]] + library[7:]
    bad = train.scratch_check(bpe.words_of(corpora.shipped("tokenizers")), planted, 300)
    assert not bad["identical"] and bad["first_difference"]["rank"] == 6


def test_a_large_corpus_checks_fewer_merges_within_its_work_budget():
    small = train.check_merges(bpe.words_of(corpora.shipped("tokenizers")))
    big = train.check_merges(bpe.words_of(corpora.shipped("sentences") * 3 + " ".join(map(str, range(50_000)))))
    assert small == train.CHECK_MAX and train.CHECK_MIN <= big < small


def test_pasted_text_trains_and_a_tiny_alphabet_makes_few_merges():
    r = run("BPE", 100, "paste", text="aaa bbb aaa ab ab ba")
    assert r["corpus"]["what"] == "pasted text" and r["steps"] == len(r["merges"]) < 10
    assert r["vocab_size"]["learned"] < 100  # nothing left to merge: every word is one token


def test_upload_of_a_utf8_file(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("\ufeff" + "café crème brûlée " * 50, encoding="utf-8")
    r = run("WordPiece", 100, "upload", upload=str(path))
    assert r["corpus"]["chars"] == len("café crème brûlée " * 50) and "mine.txt" in r["corpus"]["what"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(vocab_size=99), "vocab_size must be between 100 and 8000"),
    (dict(vocab_size=8001), "vocab_size must be between 100 and 8000"),
    (dict(vocab_size=math.nan), "vocab_size must be a whole number"),
    (dict(vocab_size="lots"), "vocab_size must be a whole number"),
    (dict(vocab_size=True), "vocab_size must be a whole number"),
    (dict(algorithm="GPT"), "algorithm must be one of BPE, WordPiece, Unigram"),
    (dict(algorithm=["BPE"]), "algorithm must be one of"),
    (dict(corpus="../../etc/passwd"), "corpus must be one of tokenizers, glossary, sentences, paste, upload"),
    (dict(corpus=3), "corpus must be one of"),
    (dict(corpus="paste", text=""), "no letters or digits"),
    (dict(corpus="paste", text=None), "pasted text must be text"),
    (dict(corpus="paste", text="!!! ??? ..."), "no letters or digits"),
    (dict(corpus="paste", text=["a"]), "pasted text must be text"),
    (dict(corpus="upload"), "No file was uploaded"),
    (dict(corpus="upload", upload="/nonexistent/x.txt"), "could not be read"),
    (dict(sentence=""), "sentence is empty"),
    (dict(sentence="word " * 300), "at most 1,000 are allowed"),
    (dict(sentence=12), "sentence must be text"),
])
def test_hostile_input_gets_a_readable_message(kwargs, message):
    with pytest.raises(InputError, match=message):
        run(**kwargs)


def test_too_long_a_text_is_refused_before_training(monkeypatch):
    monkeypatch.setattr(corpora, "MAX_CHARS", 1000)
    with pytest.raises(InputError, match="at most 1,000 are allowed"):
        run(corpus="paste", text="word " * 300)


@pytest.mark.parametrize("content,message", [
    (b"\x00\x01binary\x00" * 20, "looks binary"),
    ("caf\xe9 latin-1 text".encode("latin-1"), "not UTF-8 text"),
    (b"", "no letters or digits"),
])
def test_bad_uploads_get_a_readable_message(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        run(corpus="upload", upload=str(path))


def test_lone_surrogates_and_odd_scripts_train_without_crashing():
    text = "naïve \ud800 日本語のテキスト 🤗🤗 emoji " * 30
    r = run("BPE", 120, "paste", text=text, sentence="日本 \udfff 🤗")
    assert r["scratch_check"]["identical"] and r["replay"]["timeline"]


def test_unigram_on_a_tiny_text_says_what_to_do_or_trains():
    try:
        r = run("Unigram", 8000, "paste", text="tiny text")
    except InputError as exc:
        assert "Use more text or a smaller vocabulary size" in str(exc)
    else:
        assert r["vocab_size"]["learned"] < 8000


def test_tokens_per_word_against_the_real_tokenizers():
    r = train_tokenizer("BPE", 2000, "glossary", sentence=SENTENCE)
    rows = {row.get("role", row["tokenizer"]): row for row in r["tokens_per_word"]}
    assert set(rows) == {"trained here", "embedder", "decoder"}
    assert rows["embedder"]["vocab_size"] > 20_000 and rows["decoder"]["vocab_size"] > 20_000
    for row in rows.values():
        assert 1.0 <= row["corpus"] < 3 and row["sentence"] >= 1.0
    # Trained on this very text, 2,000 tokens cut it into about as few pieces as 30,000-50,000 general ones.
    assert rows["trained here"]["corpus"] < 1.4 * min(rows["embedder"]["corpus"], rows["decoder"]["corpus"])


def test_the_scratch_source_is_the_module_a_learner_reads():
    src = api.scratch_source()
    for name in ("def get_stats", "def merge", "def train", "def encode", "def decode", "def best_pair"):
        assert name in src
