"""Figures true for the data they describe, where the backend computes them.

BLEU's breakdown reports what sacrebleu counted (matches / n-grams, smoothing named); the logit
lens says when its embedding row only echoes the input token (tied embeddings); QA lists
"at the age of 36" and "at the age of 36." once.
"""

from __future__ import annotations

import pytest
import sacrebleu
import torch
from transformers import BertConfig, BertForQuestionAnswering

from backend.anatomy import lens, scratch
from backend.engines.qa import extractive_qa, span_qa
from backend.pipelines.metrics import bleu
from tests.tiny_models import minilm_tokenizer, smollm2_tokenizer, tiny_llama


# ----------------------------------------------------------------------------- BLEU

def test_bleu_reports_sacrebleus_matches_and_names_the_smoothed_precisions():
    hyp, ref = "The mayor opened the new bridge on Monday", "On Sunday a ferry left the old harbour"
    lib = sacrebleu.sentence_bleu(hyp, [ref])
    b = bleu(hyp, ref)
    assert b["counts"] == list(lib.counts) and b["totals"] == list(lib.totals)
    assert b["counts"][1:] == [0, 0, 0] and b["counts"][0] > 0  # only unigrams match
    assert b["precision_kinds"] == ["matched", "smoothed", "smoothed", "smoothed"]
    assert all(p > 0 for p in b["precisions"])  # the smoothing's made-up precisions: not matches


def test_bleu_marks_orders_the_prediction_is_too_short_for():
    b = bleu("Hund", "Der Hund rannte")
    assert b["totals"] == [1, 0, 0, 0] and b["precision_kinds"] == ["matched", "unused", "unused", "unused"]


# ----------------------------------------------------------------------------- logit lens

def _lens(model, tok, text="The cat sat on the mat because it was warm"):
    ids = tok(text, return_tensors="pt")
    trace = scratch.run(model, dict(ids))
    with torch.inference_mode():
        ref = model(**ids)
    t = ids["input_ids"].shape[1]
    return lens.logit_lens(model, tok, trace, ref.logits, list(range(t)), ids["input_ids"][0].tolist())


def test_tied_embeddings_make_the_embedding_row_echo_the_input():
    """A llama's embedding row has no positions mixed in: with the LM head tied to it, the row
    scores the input vector against its own matrix row (SmolLM2 is tied this way)."""
    tok = smollm2_tokenizer()
    model = tiny_llama(tie_word_embeddings=True).eval()
    out = _lens(model, tok)
    assert out["tied_embeddings"] is True
    assert out["embedding_echoes_input"] >= 0.9  # its top-1 is the token it was handed


def test_untied_embeddings_are_reported_as_such():
    tok = smollm2_tokenizer()
    model = tiny_llama(tie_word_embeddings=False).eval()
    out = _lens(model, tok)
    assert out["tied_embeddings"] is False
    assert out["embedding_echoes_input"] < 0.5


# ----------------------------------------------------------------------------- QA spans

CONTEXT = ("Marie Curie won her second Nobel Prize at the age of 44. Her husband Pierre had died at the "
           "age of 46. She began her studies in Paris at the age of 24.")


def test_answer_key_ignores_trailing_punctuation_and_space():
    assert extractive_qa.answer_key("at the age of 36.") == extractive_qa.answer_key(" at the age of 36 ")
    assert extractive_qa.answer_key("Paris.\u201d") == "Paris"
    assert extractive_qa.answer_key("U.S.") == "U.S"


def test_span_qa_lists_a_span_once_whatever_follows_it():
    """Every start of a short context is scored, so each run is a candidate with and without its
    full stop ("at 36", "at 36."): each is listed once."""
    tok = smollm2_tokenizer()
    model = tiny_llama(max_position_embeddings=1024, pad_token_id=tok.pad_token_id)
    out = span_qa.answer_spans(model, tok, "How old?", "Ann retired at 36. Bo retired at 40.", top_n=40,
                               max_answer_tokens=8, starts=40)
    texts = [a["answer"] for a in out["answers"]]
    keys = [extractive_qa.answer_key(t) for t in texts]
    assert len(keys) == len(set(keys)), texts
    assert {"at 36", "at 40"} <= set(keys) and len(keys) > 10


def test_extractive_qa_lists_a_span_once_whatever_follows_it():
    tok = minilm_tokenizer()
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=64)
    model = BertForQuestionAnswering(cfg).eval()
    out = extractive_qa.answer_question(model, tok, "How old was she?", CONTEXT, top_n=60, max_answer_tokens=8)
    keys = [(a["start"], extractive_qa.answer_key(a["answer"])) for a in out["answers"]]
    assert len(keys) == len(set(keys)), [a["answer"] for a in out["answers"]]


# ----------------------------------------------------------------------------- Tokenizers

def test_text_the_encoder_cannot_spell_is_reported_as_unknown():
    from backend.tokenizers.api import explore

    enc = explore("This is unbelievable 🤯", minilm_tokenizer())
    assert enc["unknown"] == [{"index": enc["unknown"][0]["index"], "text": "🤯"}]
    assert enc["unknown_token"] == "[UNK]" and enc["tokens"][enc["unknown"][0]["index"]]["token"] == "[UNK]"
    assert explore("This is unbelievable", minilm_tokenizer())["unknown"] == []
    assert explore("This is unbelievable 🤯", smollm2_tokenizer())["unknown"] == []  # byte-level: never
