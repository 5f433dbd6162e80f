"""Chapter 11's attention endpoints (backend/scratch/attention_cost_api.py) through the real hub path,
on tiny random models saved with the real tokenizers: full attention's output recomputed from the
weights is the reference, a window as long as the text gives it back exactly, the errors cover every
layer and head, and bad settings are refused in words."""

from __future__ import annotations

import pytest

from backend.runtime.errors import InputError
from backend.scratch import attention_cost_api as api
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_bert, tiny_llama


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("attention-cost")
    enc_tok, dec_tok = minilm_tokenizer(), smollm2_tokenizer()
    return {"encoder": save_tiny(tiny_bert(vocab_size=len(enc_tok)), enc_tok, root / "tiny-bert"),
            "decoder": save_tiny(tiny_llama(vocab_size=len(dec_tok), max_position_embeddings=512,
                                            initializer_range=0.3), dec_tok, root / "tiny-llama")}


@pytest.fixture(autouse=True)
def served(folders, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_ENCODER", str(folders["encoder"]))
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folders["decoder"]))


@pytest.mark.parametrize("role", ["encoder", "decoder"])
def test_every_layer_and_head_is_compared_and_a_whole_text_window_is_exact(role):
    d = api.sparse_attention("time flies like an arrow and fruit flies like a banana", role, 1, 1, window=64,
                             block=4, global_tokens=1, random_blocks=1)
    assert d["causal"] is (role == "decoder")
    for name in api.VARIANTS:
        assert len(d["errors"][name]) == d["num_layers"] and all(len(r) == d["num_heads"] for r in d["errors"][name])
    assert max(max(r) for r in d["errors"]["sliding window"]) < 1e-5  # the window covers the text: full attention
    t = d["num_tokens"]
    assert all(len(d["patterns"][k]) == t and len(d["patterns"][k][0]) == t for k in ("full", "block-sparse", "linear"))
    assert all(abs(sum(row) - 1) < 1e-3 for row in d["patterns"]["linear"])
    assert d["weight_kept"]["sliding window"][1][1] == pytest.approx(1.0, abs=1e-3)
    assert d["cost"][1]["share"] == pytest.approx(1.0) and 0 < d["cost"][2]["share"] <= 1


def test_a_narrow_window_scores_fewer_pairs_and_moves_the_output():
    text = " ".join(["the model reads every token"] * 6)
    d = api.sparse_attention(text, "encoder", 0, 0, window=2, block=4, global_tokens=0, random_blocks=0)
    window = next(r for r in d["cost"] if r["method"] == "sliding window")
    assert window["scores"] < d["num_tokens"] ** 2 / 3 and d["mean_error"]["sliding window"] > 0
    assert d["mean_error"]["linear"] > 0


@pytest.mark.parametrize("bad, message", [
    ({"role": "vision"}, "Role must be"), ({"layer": 99}, "layer"), ({"window": 0}, "window"),
    ({"block": 1}, "block"), ({"text": "   "}, "Enter a text")])
def test_bad_settings_are_refused_in_words(bad, message):
    with pytest.raises(InputError, match=message):
        api.sparse_attention(**{"text": "time flies", **bad})


def test_the_cost_of_attention_measures_each_length_four_ways_with_the_models_geometry():
    d = api.attention_cost("encoder", 256, 16, 1)
    assert d["lengths"] == [64, 128, 256] and len(d["rows"]) == 12
    assert (d["geometry"]["heads"], d["geometry"]["head_dim"]) == (4, 8)  # the tiny BERT: 32 wide, 4 heads
    assert set(d["fits"]) == {"full (by hand)", "fused kernel", "sliding window", "linear"}
    with pytest.raises(InputError, match="max_tokens"):
        api.attention_cost("encoder", 4096)
