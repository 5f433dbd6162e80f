"""The Attention tab's role-level entry points, through the real hub path.

Tiny random models are saved with the real tokenizers into a folder and served as the
`encoder` / `decoder` role via TLAB_MODEL_<ROLE>; every result must equal the model-level
function's on the same weights, and bad input must give a readable InputError.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend import attention, hub
from backend.attention import api
from backend.engines.attention import encodings as P
from backend.engines.attention import extract as A
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_bert, tiny_llama

PAIR_TOKENS = ["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]",
               "fruit", "flies", "like", "a", "banana", "[SEP]"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("attention-api")
    enc_tok, dec_tok = minilm_tokenizer(), smollm2_tokenizer()
    return {
        "encoder": save_tiny(tiny_bert(vocab_size=len(enc_tok)), enc_tok, root / "tiny-bert"),
        "decoder": save_tiny(tiny_llama(vocab_size=len(dec_tok), max_position_embeddings=512, initializer_range=0.3),
                             dec_tok, root / "tiny-llama"),
        "other_encoder": save_tiny(tiny_bert(vocab_size=len(enc_tok), seed=1), enc_tok, root / "tiny-bert-1"),
    }


@pytest.fixture(autouse=True)
def served(folders, monkeypatch):
    """The tiny folders serve the roles, on the CPU, with an empty result cache."""
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_ENCODER", str(folders["encoder"]))
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folders["decoder"]))
    api.clear_cache()
    yield
    api.clear_cache()


@pytest.fixture
def computations(monkeypatch):
    """Counts the model runs behind the cache."""
    calls = []
    real = A.compute_attention

    def counting(model, tokenizer, text, text_b=None):
        calls.append((text, text_b))
        return real(model, tokenizer, text, text_b)

    monkeypatch.setattr(A, "compute_attention", counting)
    return calls


def test_package_exports_the_entry_points():
    assert set(attention.__all__) >= {"attention", "heatmap", "attention_math", "positions", "ROLES",
                                      "FIRST_EXAMPLE", "SUMMARY_METRICS"}
    assert attention.ROLES == ("encoder", "decoder")
    assert attention.positions is api.positions and attention.attention is api.attention


def test_attention_encoder_pair_equals_the_model_level_result(folders):
    seen = []
    r = attention.attention(*A.FIRST_EXAMPLE, role="encoder", progress=lambda f, d: seen.append((f, d)))
    lm = hub.load("encoder")
    ref = A.compute_attention(lm.model, lm.tokenizer, *A.FIRST_EXAMPLE)
    p = r["payload"]
    assert p["tokens"] == PAIR_TOKENS and p["sentence_b_start"] == 7
    assert p["attention"] == A.attention_payload(ref)["attention"] and p["shape"] == [2, 4, 13, 13]
    assert p["role"] == "encoder" and not p["causal"] and p["note"] == ""
    assert p["model"] == r["model"] == lm.describe()
    assert r["model"]["checkpoint"] == str(folders["encoder"]) and r["model"]["source"] == "local-dir"
    assert (r["num_tokens"], r["num_layers"], r["num_heads"], r["causal"]) == (13, 2, 4, False)
    assert r["top_heads"] == p["top_heads"] == A.top_heads(A.head_summary(ref.attention, ref.special))
    for name, grid in A.head_summary(ref.attention, ref.special).items():
        assert np.array_equal(r["summary"][name], grid)
    for doc in (r["head_view"], r["model_view"]):
        assert doc.startswith('<iframe class="tlab-attention-view"') and 'sandbox="allow-scripts"' in doc
    assert str(folders["encoder"]) in r["head_view"]  # the checkpoint titles the view
    assert [d for _, d in seen][-2:] == ["Running the model", "Drawing the views"]
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)
    json.dumps(p, allow_nan=False)


@pytest.mark.parametrize("layer", [None, "", -1, -1.0, "-1"])
def test_attention_all_layers_spellings(layer):
    assert attention.attention("time flies", role="encoder", layer=layer)["payload"]["layers"] == [0, 1]


def test_attention_one_layer_and_bad_layers():
    p = attention.attention("time flies", role="encoder", layer=1.0)["payload"]
    assert p["layers"] == [1] and np.array(p["attention"]).shape == (1, 4, 4, 4)
    with pytest.raises(InputError, match="Layer 7 does not exist: this model has layers 0 to 1"):
        attention.attention("time flies", role="encoder", layer=7)
    with pytest.raises(InputError, match="layer must be a whole number"):
        attention.attention("time flies", role="encoder", layer="two")


def test_attention_decoder_is_causal():
    r = attention.attention("The cat sat on the mat", role="decoder")
    arr = np.array(r["payload"]["attention"])
    assert r["causal"] and r["payload"]["causal"] and (r["num_layers"], r["num_heads"]) == (2, 6)
    assert arr.shape == (2, 6, r["num_tokens"], r["num_tokens"]) and np.all(np.triu(arr, 1) == 0)
    assert r["model"]["role"] == "decoder"


def test_over_the_view_cap_the_views_become_a_notice():
    r = attention.attention("word " * 100, role="encoder")
    assert r["num_tokens"] == 102 and r["payload"]["attention"] is not None  # 2 x 4 x 102^2 is under the array cap
    for doc in (r["head_view"], r["model_view"]):
        assert "<iframe" not in doc and "102 tokens" in doc and f"at most {A.VIEW_MAX_TOKENS}" in doc


@pytest.mark.parametrize("role, message", [
    ("gpt9", "Role must be 'encoder' or 'decoder', got 'gpt9'."),
    ("", "Role must be 'encoder' or 'decoder', got ''."),
    (None, "Role must be 'encoder' or 'decoder', got ''."),
    (3, "Role must be 'encoder' or 'decoder', got a number."),
])
def test_bad_role_is_refused_by_every_entry_point(role, message):
    calls = [
        lambda: attention.attention("hi", role=role),
        lambda: attention.heatmap("hi", "", role, 0, 0),
        lambda: attention.attention_math("hi", "", role, 0, 0),
        lambda: attention.positions(role),
    ]
    for call in calls:
        with pytest.raises(InputError) as info:
            call()
        assert str(info.value) == message


def test_role_is_read_loosely():
    assert attention.attention("hi", role=" Encoder ")["model"]["role"] == "encoder"


def test_text_errors_are_readable():
    with pytest.raises(InputError, match="Enter a text"):
        attention.attention("  ", role="encoder")
    with pytest.raises(InputError, match="first sentence"):
        attention.attention("", "fruit flies", role="encoder")
    with pytest.raises(InputError, match="must be text, got a list"):
        attention.heatmap(["a"], "", "encoder", 0, 0)


def test_heatmap_reuses_the_last_computation(computations):
    r = attention.attention(*A.FIRST_EXAMPLE, role="encoder")
    lm = hub.load("encoder")
    assert len(computations) == 1
    for layer, head in ((0, 0), (1, 3), (1.0, 2.0)):
        h = attention.heatmap(*A.FIRST_EXAMPLE, "encoder", layer, head)
        assert (h["layer"], h["head"]) == (int(layer), int(head))
    assert len(computations) == 1
    assert h["tokens"] == PAIR_TOKENS and not h["causal"] and h["checkpoint"] == lm.checkpoint
    assert h["matrix"].shape == (13, 13)
    assert np.array_equal(np.round(h["matrix"].astype(np.float64), 4), np.array(r["payload"]["attention"])[1, 2])
    assert h["model"] == lm.describe()


def test_cache_keeps_three_and_keys_on_the_checkpoint(folders, monkeypatch, computations):
    texts = ["one text", "two texts", "three texts", "four texts"]
    for text in texts:
        attention.heatmap(text, "", "encoder", 0, 0)
    assert len(computations) == 4
    attention.heatmap("four texts", "", "encoder", 1, 1)
    attention.heatmap("two texts", None, "encoder", 1, 1)  # None and "" are the same pair
    assert len(computations) == 4
    attention.heatmap("one text", "", "encoder", 0, 0)  # evicted: the oldest of four
    assert len(computations) == 5
    attention.heatmap("one text", "", "decoder", 0, 0)  # another role
    monkeypatch.setenv("TLAB_MODEL_ENCODER", str(folders["other_encoder"]))
    other = attention.heatmap("one text", "", "encoder", 0, 0)  # another checkpoint, same text
    assert len(computations) == 7 and other["checkpoint"] == str(folders["other_encoder"])


def test_heatmap_clamps_to_the_model_and_refuses_nonsense():
    h = attention.heatmap("time flies", "", "decoder", 29, 8)  # the real decoder's last layer/head
    assert (h["layer"], h["head"]) == (1, 5) and h["causal"]
    assert np.all(np.triu(h["matrix"], 1) == 0) and h["matrix"].shape == (len(h["tokens"]),) * 2
    with pytest.raises(InputError, match="Layer -1 does not exist"):
        attention.heatmap("time flies", "", "decoder", -1, 0)
    with pytest.raises(InputError, match="head must be a whole number"):
        attention.heatmap("time flies", "", "decoder", 0, float("nan"))


def test_attention_math_equals_the_model_level_payload():
    seen = []
    p = attention.attention_math("time flies like an arrow", "", "decoder", 1, 4, -1,
                                 progress=lambda f, d: seen.append(d))
    lm = hub.load("decoder")
    ref = A.attention_math(lm.model, lm.tokenizer, "time flies like an arrow", 1, 4, -1)
    assert {k: v for k, v in p.items() if k not in ("role", "model")} == ref
    assert p["role"] == "decoder" and p["model"] == lm.describe() and "Running the model" in seen
    assert p["kv_head"] == 1 and p["within_tolerance"] and p["query_index"] == len(p["tokens"]) - 1
    json.dumps(p, allow_nan=False)


@pytest.mark.parametrize("query", [None, ""])
def test_attention_math_empty_query_means_the_last_token(query):
    p = attention.attention_math(*A.FIRST_EXAMPLE, "encoder", 0, 0, query)
    assert p["tokens"] == PAIR_TOKENS and p["query_index"] == 12 and p["query_token"] == "[SEP]"


def test_attention_math_bad_input():
    for args, msg in [((0, 4, 0), "Head 4 does not exist"), ((2, 0, 0), "Layer 2 does not exist"),
                      ((0, 0, 99), "Query token 99 does not exist")]:
        with pytest.raises(InputError, match=msg):
            attention.attention_math("time flies", "", "encoder", *args)


def test_positions_per_role():
    e = attention.positions("encoder")
    lm = hub.load("encoder")
    assert e["learned_similarity"].shape == (128, 128) and e["rotary"] is None
    assert np.array_equal(e["learned_similarity"], P.position_report(lm.model)["learned_similarity"])
    assert e["sinusoidal"].shape == (128, 32) and e["checkpoint"] == lm.checkpoint and e["model"] == lm.describe()
    d = attention.positions("decoder")
    assert d["learned_similarity"] is None and d["rotary"]["inv_freq"][0] == 1.0 and len(d["rotary"]["inv_freq"]) == 4
    assert d["model"]["role"] == "decoder"


def test_tab_handlers_format_the_backend_results():
    """The tab only formats: its outputs come from the entry points' plain data."""
    from components.attention import ui as tab

    out = tab.run_attention(*A.FIRST_EXAMPLE, "encoder", -1, progress=lambda *a, **k: None)
    assert len(out) == 8 and out[0]["tokens"] == PAIR_TOKENS
    assert "13 tokens · 2 layers × 4 heads · bidirectional (encoder)" in out[5]
    assert out[6]["maximum"] == 1 and out[7]["maximum"] == 3
    rows = out[4]  # a dataframe, one row per listed head (Markdown split rows at '<|im_start|>')
    assert len(rows) == sum(len(h) for h in out[0]["top_heads"].values()) == 3 * len(A.SUMMARY_METRICS)
    assert [r[3] for r in rows if r[0] == "To special tokens"][0] == A.SUMMARY_METRICS["special"]
    assert "<|im_start|>" in A.SUMMARY_METRICS["special"]
    fig = tab.run_heatmap(*A.FIRST_EXAMPLE, "encoder", 1, 2)
    assert fig.layout.title.text.endswith(": layer 1, head 2")
    payload, _, _, md, badge = tab.run_math("time flies", "", "decoder", 0, 1, -1, progress=lambda *a, **k: None)
    assert "**Grouped KV**: 6 query heads share 2 key/value heads" in md and "Served by" in badge
    sin, learned, rotary, text, _ = tab.run_positions("decoder", progress=lambda *a, **k: None)
    assert learned["visible"] is False and learned["value"] is None  # hidden, not an empty frame
    assert rotary["visible"] is True and text.startswith("**Rotary (RoPE)**") and "no position vectors" in text
    _, learned, rotary, text, _ = tab.run_positions("encoder", progress=lambda *a, **k: None)
    assert learned["visible"] is True and rotary["visible"] is False and "Learned position" in text
    import gradio as gr

    from components.shell import endpoint

    with pytest.raises(gr.Error, match="Role must be"):  # as the page calls it (the fixture here is `served`)
        endpoint.served(tab.run_heatmap)("hi", "", "gpt9", 0, 0)
