"""The Anatomy tab's from-scratch pass on tiny random models of each family.

Every hidden state must equal the model's own within 1e-4; a deliberately broken step (a norm
in the wrong place, rotary at the wrong positions) must be caught; the logit lens, mean
pooling, the classification head and the parameter budget must equal what the model computes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from backend import anatomy
from backend.engines.embedding import vectors as embedding
from backend.anatomy import bert, gpt2, lens, llama, parameters, pooling, scratch
from backend.anatomy.ops import UnsupportedModel
from backend.engines.attention import encodings
from backend.runtime.errors import InputError, LabError
from tests.helpers.served_models import folders  # noqa: F401  (a fixture: the tiny models as folders)
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer, tiny_bert, tiny_gpt2, tiny_llama

TOL = anatomy.TOLERANCE


def _pair_batch():
    tok = minilm_tokenizer()
    return dict(tok(["time flies like an arrow", "fruit flies"], ["a pair of words", "b"],
                    padding=True, return_tensors="pt"))


def _decoder_batch():
    tok = smollm2_tokenizer()
    tok.padding_side = "right"
    return dict(tok(["The cat sat on the mat because it was tired", "Hello"], padding=True, return_tensors="pt"))


@pytest.fixture(scope="module")
def models_():
    # initializer_range 0.3 makes the random weights large enough that a wrong step shows clearly
    return {
        "bert": tiny_bert(initializer_range=0.3),
        "llama": tiny_llama(initializer_range=0.3, rope_theta=100000.0),
        "gpt2": tiny_gpt2(initializer_range=0.3),
    }


def _inputs(fam):
    return _pair_batch() if fam == "bert" else _decoder_batch()


@pytest.mark.parametrize("fam", ["bert", "llama", "gpt2"])
def test_every_layer_matches_the_model(models_, fam):
    model, inputs = models_[fam], _inputs(fam)
    assert (inputs["attention_mask"] == 0).any()  # padding is part of the test
    diffs = scratch.compare(model, inputs)
    assert len(diffs) == model.config.num_hidden_layers + 1
    assert max(diffs) < TOL, diffs


def test_decoders_report_the_normed_last_state(models_):
    assert scratch.reference(models_["llama"], _decoder_batch()).last_is_normed
    assert scratch.reference(models_["gpt2"], _decoder_batch()).last_is_normed
    assert not scratch.reference(models_["bert"], _pair_batch()).last_is_normed


def test_pre_norm_in_bert_is_caught(models_, monkeypatch):
    monkeypatch.setattr(bert, "attention_sublayer", bert.attention_sublayer_pre_norm)
    diffs = scratch.compare(models_["bert"], _pair_batch())
    assert diffs[0] < TOL and min(diffs[1:]) > 1e-2


def test_post_norm_in_llama_is_caught(models_, monkeypatch):
    def post_norm(layer, x, ctx):
        added, parts = llama.grouped_query_attention(layer.self_attn, x, ctx)
        return llama.rms_norm(layer.input_layernorm, x + added), added, parts

    monkeypatch.setattr(llama, "attention_sublayer", post_norm)
    assert min(scratch.compare(models_["llama"], _decoder_batch())[1:]) > 1e-2


def test_wrong_rotary_is_caught(models_, monkeypatch):
    real = encodings.rotary_cos_sin_for

    def reversed_positions(model, n, device=None):
        cos, sin = real(model, n, device)
        return cos.flip(0), sin.flip(0)

    monkeypatch.setattr(encodings, "rotary_cos_sin_for", reversed_positions)
    assert min(scratch.compare(models_["llama"], _decoder_batch())[1:]) > 1e-2


def test_gpt2_without_causal_mask_is_caught(models_, monkeypatch):
    real = scratch.context

    def bidirectional(model, inputs):
        ctx = real(model, inputs)
        ctx.mask = inputs["attention_mask"].bool()[:, None, None, :].expand_as(ctx.mask)
        return ctx

    monkeypatch.setattr(scratch, "context", bidirectional)
    assert max(scratch.compare(models_["gpt2"], _decoder_batch())[1:]) > 1e-2


def test_rotary_tables_equal_the_models_own_bit_for_bit(models_):
    """The one rotary table (backend/engines/attention/encodings.py), float32 like transformers."""
    model = models_["llama"]
    cos, sin = encodings.rotary_cos_sin_for(model, 40)
    assert encodings.rotary_inv_freq(model.config).dtype == np.float32
    assert torch.equal(torch.from_numpy(encodings.rotary_inv_freq(model.config)), model.model.rotary_emb.inv_freq)
    their_cos, their_sin = model.model.rotary_emb(torch.zeros(1, 40, 1), torch.arange(40)[None])
    assert torch.equal(cos, their_cos[0]) and torch.equal(sin, their_sin[0])


def test_trace_shapes_and_kept_parts(models_):
    model, inputs = models_["llama"], _decoder_batch()
    trace = scratch.run(model, inputs, keep_layer=1)
    b, t = inputs["input_ids"].shape
    assert len(trace.hidden) == 3 and len(trace.attn_added) == len(trace.mlp_added) == 2
    scores, mask, weights = trace.parts
    assert scores.shape == weights.shape == (b, 6, t, t) and mask.shape == (b, 1, t, t)
    assert not mask[0, 0].triu(1).any()  # causal
    assert torch.all(weights[0].triu(1) == 0)
    assert torch.allclose(weights[0].sum(-1), torch.ones(6, t))
    # the pre-norm stream is exactly the sum of what was added
    assert torch.allclose(trace.hidden[2], trace.hidden[1] + trace.attn_added[1] + trace.mlp_added[1])


@pytest.mark.parametrize("fam", ["llama", "gpt2"])
def test_logit_lens_last_layer_is_the_model(models_, fam):
    model, tok = models_[fam], smollm2_tokenizer()
    inputs = dict(tok(["The cat sat on the mat"], return_tensors="pt"))
    trace = scratch.run(model, inputs)
    ref = scratch.reference(model, inputs)
    t = inputs["input_ids"].shape[1]
    out = lens.logit_lens(model, tok, trace, ref.logits, list(range(t)))
    assert out["last_layer_max_abs_diff"] < TOL
    greedy = model.generate(**inputs, max_new_tokens=1, do_sample=False)[0, -1]
    assert out["agrees_with_greedy"] and out["lens_next_id"] == int(greedy)
    assert len(out["top1"]) == len(trace.hidden) and len(out["top5"][0][0]) == lens.TOP_K
    assert all(0 <= p <= 1 for row in out["top1_prob"] for p in row)


def test_mean_pooling_equals_the_embedder(models_):
    model, tok = models_["bert"], minilm_tokenizer()
    texts = ["time flies like an arrow", "fruit flies"]
    inputs = dict(tok(texts, padding=True, return_tensors="pt"))
    trace = scratch.run(model, inputs)
    ours = pooling.sentence_embedding(trace.hidden[-1], inputs["attention_mask"]).numpy()
    theirs = embedding.embed_texts(texts, model, tok)
    assert np.abs(ours - theirs).max() < 1e-6


def test_classification_head_equals_the_model():
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=minilm_tokenizer().vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=37, num_labels=3)).eval()
    inputs = dict(minilm_tokenizer()(["time flies like an arrow"], return_tensors="pt"))
    trace = scratch.run(model, inputs)
    with torch.inference_mode():
        ours = bert.sequence_classification(model, trace.hidden[-1])
        theirs = model(**inputs).logits
    assert ours.shape == (1, 3) and (ours - theirs).abs().max() < TOL


@pytest.mark.parametrize("fam", ["bert", "llama", "gpt2"])
def test_parameter_budget_sums_exactly(models_, fam):
    model = models_[fam]
    b = parameters.parameter_budget(model)
    assert b["matches"] and b["total"] == model.num_parameters()
    assert abs(sum(r["percent"] for r in b["rows"]) - 100) < 0.05
    counts = {r["component"]: r["parameters"] for r in b["rows"]}
    assert counts["attention"] == sum(b["attention_parts"].values()) and counts["mlp"] > 0
    assert b["tied_lm_head"] == (fam == "gpt2")


def test_parameter_budget_counts_the_book_components():
    model = tiny_bert()
    cfg = model.config
    d, ff, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    b = parameters.parameter_budget(model)
    counts = {r["component"]: r["parameters"] for r in b["rows"]}
    assert counts["attention"] == layers * 4 * (d * d + d)
    assert counts["mlp"] == layers * (d * ff + ff + ff * d + d)
    assert counts["norms"] == (2 * layers + 1) * 2 * d
    assert counts["head"] == d * d + d  # the pooler
    assert b["attention_parts"] == {p: layers * (d * d + d) for p in "qkvo"}


@pytest.mark.parametrize("name,expected", [
    ("encoder.layer.0.attention.self.query.weight", ("attention", "q")),
    ("encoder.layer.0.attention.output.dense.bias", ("attention", "o")),
    ("encoder.layer.0.attention.output.LayerNorm.weight", ("norms", None)),
    ("encoder.layer.0.output.dense.weight", ("mlp", None)),
    ("model.layers.3.self_attn.k_proj.weight", ("attention", "k")),
    ("model.layers.3.post_attention_layernorm.weight", ("norms", None)),
    ("model.layers.3.mlp.gate_proj.weight", ("mlp", None)),
    ("transformer.h.0.attn.c_attn.weight", ("attention", "qkv (fused)")),
    ("transformer.h.0.attn.c_proj.weight", ("attention", "o")),
    ("transformer.h.0.mlp.c_proj.weight", ("mlp", None)),
    ("transformer.wpe.weight", ("embeddings", None)),
    ("lm_head.weight", ("head", None)),
])
def test_component_names(name, expected):
    assert parameters.component(name) == expected


def test_architecture_without_a_recipe_is_refused():
    from transformers import DistilBertConfig, DistilBertModel

    model = DistilBertModel(DistilBertConfig(vocab_size=100, dim=32, n_layers=1, n_heads=2, hidden_dim=37))
    with pytest.raises(UnsupportedModel, match="no from-scratch recipe for distilbert.*covers bert"):
        scratch.family(model)


def test_gpt2_variant_with_other_scaling_is_refused():
    with pytest.raises(UnsupportedModel, match="scales attention"):
        scratch.family(tiny_gpt2(scale_attn_by_inverse_layer_idx=True))


def test_code_shown_is_the_code_that_runs():
    code = anatomy.api.code_of("llama")
    names = [c["name"] for c in code]
    assert names[:3] == ["embeddings", "grouped_query_attention", "attention_sublayer"]
    assert "rms_norm" in names and "rotary_cos_sin" in names and "scaled_dot_product_attention" in names
    src = {c["name"]: c["source"] for c in code}
    assert "x + added" in src["attention_sublayer"] and "rms_norm(layer.input_layernorm, x)" in src["attention_sublayer"]
    assert all(c["doc"] for c in code)


def test_steps_carry_their_numbers(served):
    r = anatomy.anatomy("The cat sat", "", "decoder")
    numbers = {c["name"]: c["numbers"] for c in r["code"]}
    assert numbers["embeddings"] == {"max |ours - model's|": r["layers"][0]["max_abs_diff"]}
    assert len(numbers["decoder_layer"]["max |ours - model's| per layer"]) == r["num_layers"]
    assert len(numbers["mlp_sublayer"]["mean size of what the MLP added, per layer"]) == r["num_layers"]
    assert "final_norm" in numbers and numbers["rms_norm"] == {}


# ----------------------------------------------------------------------------- the entry point


@pytest.fixture
def served(folders, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_ENCODER", str(folders["encoder"]))
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(folders["encoder"]))
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folders["decoder"]))
    return folders


def test_api_encoder_pair(served):
    r = anatomy.anatomy("time flies like an arrow", "fruit flies", "encoder", 1, 2, -1)
    json.dumps(r)  # the API contract is JSON
    assert r["family"] == "bert" and r["within_tolerance"] and r["max_abs_diff"] < TOL
    assert [row["name"] for row in r["layers"]] == ["embeddings", "layer 1", "layer 2"]
    assert r["tokens"][0] == "[CLS]" and r["num_tokens"] == len(r["tokens"])
    assert r["stream"]["token"] == "[SEP]" and r["stream"]["token_index"] == r["num_tokens"] - 1
    assert len(r["stream"]["norm"]) == 3 and len(r["stream"]["cosine_prev"]) == 2
    m = r["masks"]
    assert m["kind"] == "padding" and (m["layer"], m["head"]) == (1, 2)
    assert m["batch"][1] == ["[CLS]", "fruit", "flies", "[SEP]", "[PAD]", "[PAD]", "[PAD]"]
    assert m["batch_attention_mask"] == [[1] * 7, [1] * 4 + [0] * 3] and m["attention_mask"] == [1] * 4 + [0] * 3
    assert all(row[4:] == [0, 0, 0] for row in m["mask"]) and m["batch_max_abs_diff"] < TOL
    assert all(row[4:] == [0, 0, 0] for row in m["weights"][:4])
    assert r["lens"] is None
    assert r["pooling"]["within_tolerance"] and r["pooling"]["cosine"] > 0.999999
    assert r["budget"]["matches"] and r["model"]["role"] == "encoder"


def test_api_decoder(served):
    r = anatomy.anatomy("The cat sat on the mat", "", "decoder", 0, 5, 2)
    json.dumps(r)
    assert r["family"] == "llama" and r["within_tolerance"] and r["last_compared_after_final_norm"]
    assert r["masks"]["kind"] == "causal" and r["masks"]["mask"][0][1] == 0 and r["masks"]["mask"][1][0] == 1
    assert r["stream"]["token_index"] == 2
    assert r["lens"]["last_layer_max_abs_diff"] < TOL and r["lens"]["agrees_with_greedy"]
    assert r["lens"]["positions"] == list(range(r["num_tokens"]))[-lens.LENS_POSITIONS:]
    assert r["pooling"] is None and r["model"]["role"] == "decoder"


@pytest.mark.parametrize("kwargs,message", [
    (dict(text=""), "empty"),
    (dict(text="x", role="nope"), "Role must be"),
    (dict(text="x", layer=7), "Layer 7 does not exist"),
    (dict(text="x", head=float("nan")), "head must be"),
    (dict(text="x", token_index=99), "Token 99 does not exist"),
    (dict(text="word " * 200), "at most 128"),
])
def test_api_bad_input_is_readable(served, kwargs, message):
    with pytest.raises(InputError, match=message):
        anatomy.anatomy(**kwargs)


def test_api_unsupported_architecture(served):
    with pytest.raises(LabError, match="no from-scratch recipe for distilbert"):
        anatomy.anatomy("time flies", role="encoder", override=str(served["distilbert"]))


def test_roberta_positions_count_from_padding_idx():
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    model = RobertaModel(RobertaConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                       intermediate_size=37, max_position_embeddings=64, initializer_range=0.3,
                                       attn_implementation="eager")).eval()
    ids = torch.tensor([[0, 5, 6, 7, 8, 2], [0, 9, 2, 1, 1, 1]])  # 1 = <pad>
    inputs = {"input_ids": ids, "attention_mask": (ids != 1).long()}
    assert scratch.family(model) == "bert"
    assert max(scratch.compare(model, inputs)) < TOL
