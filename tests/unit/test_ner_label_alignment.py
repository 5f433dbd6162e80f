"""A word the tokenizer turns into no piece at all (a lone combining mark, which the
uncased MiniLM tokenizer strips) is tagged without an IndexError in align_labels and without
shifting every later word's tag. Real MiniLM tokenizer, tiny random BERT."""

from __future__ import annotations

import pytest

from backend.engines.ner import data as ner_data
from backend.engines.ner import token_classification as tc
from tests.tiny_models import minilm_tokenizer, tiny_bert

pytestmark = pytest.mark.unit

TEXT = "abc\u0301\u0301\u0301\u0301e\u0301"  # the text
LABELS = ner_data.bio_labels()


def _words():
    return [w for w, _, _ in ner_data.words_with_offsets(TEXT)]


def test_combining_marks_are_words_without_pieces():
    words = _words()
    _, word_ids = ner_data.encode(minilm_tokenizer(), [words])
    seen = {w for w in word_ids[0] if w is not None}
    assert len(words) == 7 and seen == {0, 5}  # abc and e have pieces; the five marks have none
    assert max(seen) >= sum(1 for w in word_ids[0] if w is not None)  # word ids skip: not token positions
    assert ner_data.first_piece_mask(word_ids[0]).count(True) == 2
    assert ner_data.first_pieces(word_ids[0], len(words)) == [1, None, None, None, None, 2, None]
    labels = ner_data.align_labels(word_ids[0], list(range(len(words))))
    assert [l for l in labels if l != ner_data.IGNORE] == [0, 5]  # each word's own label, at its own piece


def test_prediction_keeps_each_word_in_its_place():
    tok = minilm_tokenizer()
    model = tc.new_model(tiny_bert(), len(LABELS))
    words = _words() + ["Paris"]
    out = tc.predict(model, tok, [words], LABELS)[0]
    assert len(out["tags"]) == len(words)
    assert [out["tags"][i] for i in (1, 2, 3, 4, 6)] == ["O"] * 5  # no piece: a certain O
    probs = tc._word_probs(model, tok, [words], 128)[0]
    enc, word_ids = ner_data.encode(tok, [words])
    batch = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
    import torch

    with torch.inference_mode():
        ref = tc._forward(model.eval(), batch).float().softmax(-1)[0].numpy()
    pos = ner_data.first_pieces(word_ids[0], len(words))
    for w in (0, 5, 7):  # abc, e, Paris: the probabilities of their own first pieces
        assert probs[w] == pytest.approx(ref[pos[w]], abs=1e-6)


def test_training_labels_skip_words_without_pieces():
    tok = minilm_tokenizer()
    words = _words()
    tags = ["B-PER", "O", "O", "O", "O", "B-LOC", "O"]
    batch, _ = tc.make_batch(tok, [words], {l: i for i, l in enumerate(LABELS)}, [tags])
    kept = [LABELS[l] for l in batch["labels"][0].tolist() if l != ner_data.IGNORE]
    assert kept == ["B-PER", "B-LOC"]
