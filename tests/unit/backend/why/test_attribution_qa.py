"""'Why this span?' on a tiny random span-head model with the real MiniLM tokenizer: the explained
number is the reader's own span score (start + end logit), removals follow the span to its new
place, and /attribute's QA refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.why import api, methods, span
from backend.engines.qa import reader
from backend.runtime import config
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import minilm_tokenizer

QUESTION = "When was the tower built?"
CONTEXT = "The tower stands in Paris. It was built in 1889 by the company of Gustave Eiffel."


@pytest.fixture(scope="module")
def tiny_reader():
    from transformers import BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=minilm_tokenizer().vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37)
    return BertForQuestionAnswering(cfg).eval()


def _logits(model, ids, types):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types]))
    return out.start_logits[0], out.end_logits[0]


def test_the_explained_number_is_the_readers_span_score(tiny_reader):
    tok = minilm_tokenizer()
    t, info = span.answer_span(tiny_reader, tok, QUESTION, CONTEXT)
    said = reader.answer(tiny_reader, tok, QUESTION, CONTEXT, top_n=1)["answers"][0]
    assert info["span"]["answer"] == said["answer"] and info["span"]["start"] == said["start"]
    assert t.value() == pytest.approx(said["logit"], abs=1e-3)  # /qa's own number for this span
    first, last = info["span"]["tokens"]
    assert not any(first <= p <= last for p in t.positions)  # the span is what is explained, not a reason
    parts = {info["parts"][p] for p in t.positions}
    assert parts == {"question", "context"}


def test_removing_a_token_follows_the_span(tiny_reader):
    tok = minilm_tokenizer()
    t, info = span.answer_span(tiny_reader, tok, QUESTION, CONTEXT, span="1889")
    first, last = info["span"]["tokens"]
    enc = tok(QUESTION, CONTEXT)
    ids, types = enc["input_ids"], enc["token_type_ids"]
    occ = methods.occlusion(t)
    for i in (t.positions[0], t.positions[-1]):  # a question token (before the span), a context token after it
        kept = [j for j in range(len(ids)) if j != i]
        s, e = _logits(tiny_reader, [ids[j] for j in kept], [types[j] for j in kept])
        shift = 1 if i < first else 0
        expected = t.value() - float(s[first - shift] + e[last - shift])
        assert occ[t.positions.index(i)] == pytest.approx(expected, abs=1e-5)
    scores, comp = methods.integrated_gradients(t, n_steps=32)
    assert len(scores) == len(t.positions) and comp["relative_gap"] is not None


def test_qa_refusals(tiny_reader, monkeypatch):
    tok = minilm_tokenizer()
    with pytest.raises(InputError, match="does not occur in the context"):
        span.answer_span(tiny_reader, tok, QUESTION, CONTEXT, span="Berlin")
    with pytest.raises(InputError, match="at most 128 tokens"):
        span.answer_span(tiny_reader, tok, QUESTION, CONTEXT * 10)
    monkeypatch.setattr(api.hub, "load", lambda *a, **k: pytest.fail("loaded a model for a refused request"))
    with pytest.raises(InputError, match="needs a question"):
        api.attribute(CONTEXT, task="qa")


def test_attribute_qa_returns_question_and_context_tokens(tiny_reader, monkeypatch):
    class LM:
        model, tokenizer, method = tiny_reader, minilm_tokenizer(), config.METHOD_FINETUNED

        @staticmethod
        def describe():
            return {"checkpoint": "tiny", "source": "test"}

    monkeypatch.setattr(api.hub, "load", lambda *a, **k: LM)
    r = api.attribute(CONTEXT, task="qa", question=QUESTION, methods=["occlusion", "gradient_x_input"],
                      random_orders=2)
    words = [(t["part"], t["token"]) for t in r["tokens"]]
    assert ("question", "When") in words and ("context", "Paris") in words
    for t in r["tokens"]:
        source = QUESTION if t["part"] == "question" else CONTEXT
        assert source[t["start"]:t["end"]] == t["token"]
    assert r["quantity"].startswith("start + end logit of the span")
    assert np.isfinite(r["checks"]["deletion"]["area_over_random"]["occlusion"])

    class Decoder(LM):
        method = config.METHOD_SPAN

    monkeypatch.setattr(api.hub, "load", lambda *a, **k: Decoder)
    with pytest.raises(InputError, match="no start and end logits"):
        api.attribute(CONTEXT, task="qa", question=QUESTION)
