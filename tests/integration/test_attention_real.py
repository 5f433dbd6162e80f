"""The from-scratch attention equals the real models' own weights: all-MiniLM-L6-v2 (BERT,
6 x 12) and SmolLM2-135M (llama, 30 layers, 9 query heads sharing 3 key/value heads, rotary),
every layer and every head, within 1e-4 in float32."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend import attention, hub
from backend.engines.attention import encodings as P
from backend.engines.attention import extract as A
from backend.engines.attention import math as am
from backend.attention import views as V

TOL = 1e-4


@pytest.fixture(scope="module")
def encoder():
    return hub.load("encoder")


@pytest.fixture(scope="module")
def decoder():
    return hub.load("decoder")


def _batch(tok, texts, pairs=None):
    tok.padding_side = "right"
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    enc = [tok(t, p)["input_ids"] if p else tok(t)["input_ids"] for t, p in zip(texts, pairs or [None] * len(texts))]
    t = max(map(len, enc))
    ids = torch.tensor([e + [pad] * (t - len(e)) for e in enc])
    mask = torch.tensor([[1] * len(e) + [0] * (t - len(e)) for e in enc])
    out = {"input_ids": ids, "attention_mask": mask}
    return out


def _check(lm, inputs, n_layers, n_heads):
    model = lm.model
    inputs = {k: v.to(model.device) for k, v in inputs.items()}
    table = np.array(am.compare_all_layers(model, inputs))
    assert table.shape == (n_layers, n_heads)
    assert table.max() < TOL, f"worst layer/head {np.unravel_index(table.argmax(), table.shape)}: {table.max()}"


def test_minilm_all_layers_heads_pair(encoder):
    assert encoder.model.config.num_hidden_layers == 6 and encoder.model.config.num_attention_heads == 12
    enc = encoder.tokenizer(*A.FIRST_EXAMPLE, return_tensors="pt")
    _check(encoder, dict(enc), 6, 12)


def test_minilm_padded_batch(encoder):
    inputs = _batch(encoder.tokenizer, ["time flies like an arrow", "a much longer sentence about fruit flies and bananas"],
                    ["fruit flies like a banana", None])
    assert (inputs["attention_mask"] == 0).any()
    inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
    _check(encoder, inputs, 6, 12)


def test_smollm2_gqa_rotary_all_layers_heads(decoder):
    cfg = decoder.model.config
    assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads) == (30, 9, 3)
    inputs = dict(decoder.tokenizer("time flies like an arrow; fruit flies like a banana", return_tensors="pt"))
    _check(decoder, inputs, 30, 9)


def test_smollm2_padded_batch(decoder):
    inputs = _batch(decoder.tokenizer, ["time flies like an arrow", "The cat sat on the mat because it was tired"])
    assert (inputs["attention_mask"] == 0).any()
    _check(decoder, inputs, 30, 9)


def test_smollm2_rotary_equals_model_module(decoder):
    t = 64
    cos, sin = P.rotary_cos_sin(decoder.model.config, t)
    ref_cos, ref_sin = decoder.model.model.rotary_emb(torch.zeros(1, t, 1), torch.arange(t)[None])
    assert torch.allclose(cos, ref_cos[0].float().cpu(), atol=1e-6)
    assert torch.allclose(sin, ref_sin[0].float().cpu(), atol=1e-6)


def test_attention_math_payload_real(encoder, decoder):
    p = A.attention_math(decoder.model, decoder.tokenizer, "time flies like an arrow", 29, 8)
    assert p["kv_head"] == 2 and p["rotary"] and p["within_tolerance"] and p["max_abs_diff"] < TOL
    e = A.attention_math(encoder.model, encoder.tokenizer, *A.FIRST_EXAMPLE[:1], layer=5, head=11)
    assert e["within_tolerance"] and not e["causal"]


def test_decoder_attention_causal_and_views(decoder):
    r = A.compute_attention(decoder.model, decoder.tokenizer, *A.FIRST_EXAMPLE)
    assert r.attention.shape[:2] == (30, 9) and np.all(np.triu(r.attention, 1) == 0)
    doc = V.head_view_html(r.attention, r.tokens, r.sentence_b_start)
    assert "cdnjs" not in doc and len(doc) < 2_000_000


def test_entry_points_serve_the_packaged_models(encoder, decoder):
    """By role, through the hub: the same weights as the fixtures, the views and the math."""
    r = attention.attention(*A.FIRST_EXAMPLE, role="encoder")
    assert r["model"] == encoder.describe() and (r["num_layers"], r["num_heads"], r["num_tokens"]) == (6, 12, 13)
    assert r["payload"]["tokens"][r["payload"]["sentence_b_start"]] == "fruit" and "<iframe" in r["head_view"]
    h = attention.heatmap(*A.FIRST_EXAMPLE, "encoder", 5, 11)
    assert h["matrix"].shape == (13, 13) and np.allclose(h["matrix"].sum(-1), 1, atol=1e-5)
    m = attention.attention_math("time flies like an arrow", "", "decoder", 29, 8, -1)
    assert m["model"] == decoder.describe() and m["kv_head"] == 2 and m["within_tolerance"]
    pos = attention.positions("decoder")
    assert pos["learned_similarity"] is None and pos["rotary"]["head_dim"] == 64
