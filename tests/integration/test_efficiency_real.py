"""int8 copies of the real models (SmolLM2-135M-Instruct, all-MiniLM-L6-v2 under the local profile).

The targets that need timing (>= 1.8x tok/s, 20/20 agreement on 8 tokens) live in
bench/efficiency.py; here: the int8 copies run, are much smaller, keep perplexity within 5%
on all 20 shipped texts, keep the classifier's labels, and leave the served models untouched.
"""

from __future__ import annotations

import pytest
import torch

from backend import hub
from backend.efficiency import measure as M
from backend.engines.compression import quantize as Q
from backend.engines.classify.similarity import SENTIMENT_DESCRIPTIONS


@pytest.fixture(scope="module")
def decoder():
    return hub.load("decoder")


@pytest.fixture(scope="module")
def decoder_int8(decoder):
    return Q.cached_int8(("integration", decoder.checkpoint), decoder.model)[0]


def test_int8_decoder_runs_and_leaves_the_served_model_alone(decoder, decoder_int8):
    probe = {k: v[:2].clone() for k, v in decoder.model.state_dict().items() if v.dim() == 2}
    assert Q.count_int8_linears(decoder_int8) == 30 * 7 + 1  # q, k, v, o, gate, up, down in 30 layers + lm_head
    assert Q.count_int8_linears(decoder.model) == 0
    run = M.greedy(decoder_int8, decoder.tokenizer, "The capital of France is", 8)
    assert len(run.ids) == 8 and decoder.tokenizer.decode(run.ids).strip()
    assert all(torch.equal(decoder.model.state_dict()[k][:2], v) for k, v in probe.items())


def test_int8_decoder_is_much_smaller(decoder, decoder_int8):
    fp, q = Q.sizes(decoder.model), Q.sizes(decoder_int8)
    assert 500 < fp["memory_mb"] < 540  # 135M fp32 parameters, the tied embedding counted once
    # the tied embedding stays fp32 (113 MB); every Linear, the output head's copy included, is int8
    assert q["memory_mb"] < 0.5 * fp["memory_mb"]
    assert q["disk_mb"] < 0.5 * fp["disk_mb"]


def test_int8_perplexity_within_5_percent_on_the_shipped_texts(decoder, decoder_int8):
    texts = M.load_texts()
    fp = M.perplexity(decoder.model, decoder.tokenizer, texts)
    q = M.perplexity(decoder_int8, decoder.tokenizer, texts)
    assert fp["tokens"] == q["tokens"] > 20 * 60
    assert 2 < fp["perplexity"] < 40  # a working LM on plain English
    assert abs(q["perplexity"] / fp["perplexity"] - 1) < 0.05, (fp["perplexity"], q["perplexity"])


def test_int8_encoder_keeps_the_classifier_labels():
    lm = hub.load("embedder")
    q = Q.int8_copy(lm.model)
    assert Q.count_int8_linears(q) == 6 * 6 + 1  # q, k, v, attention output, intermediate, output per layer + pooler
    sentences = [s for t in M.load_texts() for s in t.split(". ") if len(s) > 3]
    a, cos_a, _ = M.labels_and_seconds(lm.model, lm.tokenizer, sentences, SENTIMENT_DESCRIPTIONS)
    b, cos_b, _ = M.labels_and_seconds(q, lm.tokenizer, sentences, SENTIMENT_DESCRIPTIONS)
    same = sum(x == y for x, y in zip(a, b))
    assert same >= 0.9 * len(sentences), f"{same}/{len(sentences)}"
    assert abs(cos_a - cos_b).max() < 0.05
