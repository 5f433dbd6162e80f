"""Unit tests for the attention backend: tiny random BERT / llama (GQA) / GPT-2 with real tokenizers.

The from-scratch attention must equal the model's own weights for every layer and head,
single texts, pairs and padded batches; the views must be offline and injection-safe.
"""

from __future__ import annotations

import copy
import html.parser
import json
import math
import re

import numpy as np
import pytest
import torch

from backend.runtime import config
from backend.engines.attention import extract as A
from backend.engines.attention import math as am
from backend.attention import views as V
from backend.engines.attention import encodings as P
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer, tiny_bert, tiny_gpt2, tiny_llama

INJECTION = '</script><img src=x onerror=alert(1)> "q" \\ back \u2028 \u2029 end'


@pytest.fixture(scope="module")
def bert_tok():
    return copy.deepcopy(minilm_tokenizer())  # _batch sets padding: keep the shared one as it is


@pytest.fixture(scope="module")
def llama_tok():
    return copy.deepcopy(smollm2_tokenizer())


@pytest.fixture(scope="module")
def bert(bert_tok):
    return tiny_bert(vocab_size=len(bert_tok))


@pytest.fixture(scope="module")
def llama(llama_tok):
    return tiny_llama(vocab_size=len(llama_tok), max_position_embeddings=512, initializer_range=0.3)


# ---------------------------------------------------------------------------- from-scratch == model

def _batch(tok, texts, pairs=None, padding_side="right"):
    tok.padding_side = padding_side
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return dict(tok(texts, pairs, padding=True, return_tensors="pt"))


def _max(table):
    return max(max(row) for row in table)


@pytest.mark.parametrize("case", ["single", "pair", "padded", "padded_pair"])
def test_bert_from_scratch_equals_model(bert, bert_tok, case):
    texts = ["time flies like an arrow", "fruit flies like a banana and so on and on"]
    pairs = ["fruit flies like a banana", "hi"] if "pair" in case else None
    if case in ("single", "pair"):
        texts, pairs = texts[:1], (pairs[:1] if pairs else None)
    inputs = _batch(bert_tok, texts, pairs)
    if "padded" in case:
        assert (inputs["attention_mask"] == 0).any()
    table = am.compare_all_layers(bert, inputs)
    assert len(table) == 2 and all(len(r) == 4 for r in table)
    assert _max(table) < 1e-5


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_llama_gqa_from_scratch_equals_model(llama, llama_tok, padding_side):
    assert llama.config.num_key_value_heads < llama.config.num_attention_heads  # the grouped path
    inputs = _batch(llama_tok, ["time flies like an arrow", "fruit flies like a banana, and so on and on"],
                    padding_side=padding_side)
    assert (inputs["attention_mask"] == 0).any()
    table = am.compare_all_layers(llama, inputs)
    assert len(table) == 2 and all(len(r) == 6 for r in table)
    assert _max(table) < 1e-5


def test_gpt2_from_scratch_equals_model(llama_tok):
    model = tiny_gpt2(vocab_size=len(llama_tok))
    inputs = _batch(llama_tok, ["time flies like an arrow", "fruit flies"])
    assert _max(am.compare_all_layers(model, inputs)) < 1e-5


def test_comparison_detects_a_wrong_computation(llama, llama_tok, monkeypatch):
    """The equality test can fail: break repeat_kv's grouping and the difference must show."""
    inputs = _batch(llama_tok, ["time flies like an arrow"])
    monkeypatch.setattr(am, "repeat_kv", lambda x, n: x.repeat(1, n, 1, 1))  # wrong head order
    assert _max(am.compare_all_layers(llama, inputs)) > 1e-3


def test_rotary_recomputed_equals_model_module(llama):
    for t in (1, 7, 300):
        cos, sin = P.rotary_cos_sin(llama.config, t)
        ref_cos, ref_sin = llama.model.rotary_emb(torch.zeros(1, t, 1), torch.arange(t)[None])
        assert torch.allclose(cos, ref_cos[0], atol=1e-6) and torch.allclose(sin, ref_sin[0], atol=1e-6)


def test_repeat_kv_maps_query_head_to_its_group():
    kv = torch.arange(2 * 3).float().view(1, 2, 3, 1)
    rep = am.repeat_kv(kv, 3)
    assert rep.shape == (1, 6, 3, 1)
    for h in range(6):
        assert torch.equal(rep[0, h], kv[0, h // 3])


def test_sdpa_matches_book_formula():
    torch.manual_seed(1)
    q, k, v = torch.randn(3, 5, 8), torch.randn(3, 5, 8), torch.randn(3, 5, 8)
    out, w, scores, scaled = am.scaled_dot_product_attention(q, k, v)
    ref_w = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(8), dim=-1)
    assert torch.allclose(w, ref_w, atol=1e-6) and torch.allclose(out, ref_w.bmm(v), atol=1e-6)
    assert torch.allclose(w.sum(-1), torch.ones(3, 5))


# ---------------------------------------------------------------------------- masks and extraction

def test_causal_mask_zeroes_upper_triangle(llama, llama_tok):
    r = A.compute_attention(llama, llama_tok, "time flies like an arrow", "fruit flies like a banana")
    t = len(r.tokens)
    assert r.causal and r.attention.shape == (2, 6, t, t)
    assert np.all(np.triu(r.attention, k=1) == 0)
    assert np.allclose(r.attention.sum(-1), 1, atol=1e-5)
    mask = am.build_mask(torch.ones(1, 4, dtype=torch.long), causal=True)[0, 0]
    assert torch.equal(mask, torch.ones(4, 4, dtype=torch.bool).tril())
    # and our own weights agree
    payload = A.attention_math(llama, llama_tok, "time flies like an arrow", 1, 5)
    w = np.array(next(m for m in payload["matrices"] if m["name"] == "weights")["data"])
    assert np.all(np.triu(w, k=1) == 0)


def test_encoder_is_not_causal(bert, bert_tok):
    r = A.compute_attention(bert, bert_tok, "time flies like an arrow")
    assert not r.causal and np.triu(r.attention, k=1).max() > 0


def test_pair_encoding_marks_sentence_b(bert, bert_tok, llama, llama_tok):
    r = A.compute_attention(bert, bert_tok, *A.FIRST_EXAMPLE)
    assert r.tokens[0] == "[CLS]" and r.tokens[r.sentence_b_start - 1] == "[SEP]"
    assert r.tokens[r.sentence_b_start] == "fruit"
    assert r.special[0] and not r.special[1]
    d = A.compute_attention(llama, llama_tok, *A.FIRST_EXAMPLE)
    assert "fruit" in d.tokens[d.sentence_b_start] and "arrow" in d.tokens[d.sentence_b_start - 1]


def test_readable_tokens_decode_byte_level(llama_tok):
    ids = llama_tok("time flies")["input_ids"]
    assert "".join(A.readable_tokens(llama_tok, ids)) == "time flies"


@pytest.mark.parametrize("text", ["", "   \n ", None])
def test_empty_text_is_refused(bert, bert_tok, text):
    with pytest.raises(InputError, match="Enter a text"):
        A.compute_attention(bert, bert_tok, text)


def test_only_second_sentence_is_refused(bert, bert_tok):
    with pytest.raises(InputError, match="first sentence"):
        A.compute_attention(bert, bert_tok, " ", "fruit flies")


def test_only_special_tokens_text_works(bert, bert_tok):
    r = A.compute_attention(bert, bert_tok, "[CLS] [SEP]")
    assert all(r.special) and r.attention.shape[-1] == 4


def test_token_cap(bert, bert_tok):
    text = "word " * (A.MAX_TOKENS + 5)
    with pytest.raises(InputError, match=str(A.MAX_TOKENS)):
        A.compute_attention(bert, bert_tok, text)
    ok = A.compute_attention(bert, bert_tok, "word " * (A.MAX_TOKENS - 2))
    assert ok.attention.shape[-1] == A.MAX_TOKENS
    with pytest.raises(InputError, match="characters"):
        A.compute_attention(bert, bert_tok, "x" * (config.TEXT_RULES["attention"].max_chars + 1))


# ---------------------------------------------------------------------------- payloads

def test_payload_rounding_and_shape(bert, bert_tok):
    r = A.compute_attention(bert, bert_tok, *A.FIRST_EXAMPLE)
    p = A.attention_payload(r)
    t = len(r.tokens)
    assert p["shape"] == [2, 4, t, t] and p["layers"] == [0, 1]
    arr = np.array(p["attention"])
    assert arr.shape == (2, 4, t, t)
    assert np.allclose(arr, np.round(arr, 4), atol=0) and np.abs(arr - r.attention).max() <= 5e-5 + 1e-9
    numbers = re.findall(r"[0-9.e-]+", json.dumps(p["attention"]))
    assert numbers and all(len(n.split(".")[-1]) <= 4 and "e" not in n for n in numbers)
    json.dumps(p)  # JSON-able
    one = A.attention_payload(r, layer=1)
    assert one["layers"] == [1] and np.array(one["attention"]).shape == (1, 4, t, t)
    with pytest.raises(InputError, match="Layer 7"):
        A.attention_payload(r, layer=7)
    with pytest.raises(InputError, match="whole number"):
        A.attention_payload(r, layer="two")


def test_payload_over_array_cap_needs_a_layer(bert, bert_tok, monkeypatch):
    monkeypatch.setattr(A, "MAX_ARRAY_VALUES", 2 * 4 * 20 * 20)  # the tiny model's layers x heads, 20 tokens
    assert A.attention_payload(A.compute_attention(bert, bert_tok, "word " * 18))["attention"] is not None
    r = A.compute_attention(bert, bert_tok, "word " * 30)
    p = A.attention_payload(r)
    assert p["attention"] is None and "up to 20 tokens" in p["note"] and "layer" in p["note"]
    assert np.array(A.attention_payload(r, layer=0)["attention"]).shape[0] == 1


def test_head_summary_on_known_patterns():
    t = 5
    eye = np.eye(t)[None, None]
    prev = np.zeros((t, t))
    prev[0, 0] = 1
    prev[np.arange(1, t), np.arange(t - 1)] = 1
    uniform = np.full((t, t), 1 / t)
    att = np.stack([eye[0, 0], prev, uniform])[None]  # 1 layer x 3 heads
    s = A.head_summary(att, [True, False, False, True, False])
    assert np.allclose(s["self"][0], [1, 0.2, 0.2])
    assert np.allclose(s["previous"][0], [0, 1, 0.2])
    assert np.allclose(s["entropy"][0], [0, 0, math.log2(t)], atol=1e-6)
    assert np.allclose(s["special"][0], [0.4, 0.6, 0.4])
    assert np.allclose(s["first"][0], [0.2, 0.4, 0.2])
    top = A.top_heads(s, n=1)
    assert top["self"][0]["head"] == 0 and top["previous"][0]["head"] == 1


def test_attention_math_payload(llama, llama_tok, bert, bert_tok):
    p = A.attention_math(llama, llama_tok, "time flies like an arrow", 1, 4, query_index=-1)
    names = [m["name"] for m in p["matrices"]]
    assert {"Q", "K", "V", "Q_rot", "K_rot", "scores", "scaled", "mask", "weights", "output"} <= set(names)
    t = len(p["tokens"])
    shapes = {m["name"]: m["shape"] for m in p["matrices"]}
    assert shapes["Q"] == [t, 8] and shapes["weights"] == [t, t]
    assert p["kv_head"] == 4 // 3 and p["num_kv_heads"] == 2
    assert p["max_abs_diff"] < 1e-5 and p["within_tolerance"]
    assert p["query_index"] == t - 1
    scaled = next(m for m in p["matrices"] if m["name"] == "scaled")["data"]
    assert scaled[0][1] is None  # causal: -inf is sent as null
    json.dumps(p, allow_nan=False)
    b = A.attention_math(bert, bert_tok, *A.FIRST_EXAMPLE[:1], layer=0, head=0, query_index=0)
    assert not b["rotary"] and b["max_abs_diff_layer"] < 1e-5
    for kwargs, msg in [({"layer": 2, "head": 0}, "Layer 2"), ({"layer": 0, "head": 6}, "Head 6"),
                        ({"layer": 0, "head": 0, "query_index": 99}, "Query token 99")]:
        with pytest.raises(InputError, match=msg):
            A.attention_math(llama, llama_tok, "time flies", **kwargs)


# ---------------------------------------------------------------------------- views

class _IframeParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.attrs = None

    def handle_starttag(self, tag, attrs):
        if tag == "iframe":
            self.attrs = dict(attrs)


class _ScriptParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.count, self.last, self.other_tags, self._in = 0, "", set(), False

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.count += 1
            self._in = True
            self.last = ""
        else:
            self.other_tags.add(tag)

    def handle_endtag(self, tag):
        self._in = False if tag == "script" else self._in

    def handle_data(self, data):
        if self._in:
            self.last += data


def test_safe_json_escapes_script_breakers():
    s = V.safe_json({"t": INJECTION})
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in s
    assert json.loads(s) == {"t": INJECTION}


def test_pack_roundtrip():
    rng = np.random.default_rng(0)
    a = rng.dirichlet(np.ones(7), size=(2, 3, 7))
    back = V.unpack_attention(V.pack_attention(a), a.shape)
    assert np.abs(back - a).max() <= 0.5 / V.SCALE + 1e-12


def test_head_view_document_is_offline_and_escaped(bert, bert_tok):
    r = A.compute_attention(bert, bert_tok, INJECTION, "fruit flies")
    tokens = r.tokens + []
    tokens[1] = INJECTION  # a token that is the whole attack string
    doc = V.head_view_html(r.attention, tokens, r.sentence_b_start)
    assert "<img" not in doc
    assert "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e" in doc  # the token, as data
    scripts = _ScriptParser()
    scripts.feed(doc)
    # 3 vendored libraries, the AMD names, the decoder, bertviz: a token cannot end one early
    assert "require.config(" not in scripts.last and "default-src 'none'" in doc  # CSP: no fetch at all
    # bertviz's whole script, inside the wrapper that waits for the frame to have a width
    assert scripts.count == 6 and "tlabExpand({" in scripts.last and scripts.last.rstrip().endswith("});\n})();")
    assert scripts.last.lstrip().startswith("(function tlabWhenSized()") and "const MATRIX_WIDTH = Math.max(115" in doc
    assert not scripts.other_tags - {"html", "head", "meta", "style", "body", "div", "span", "select", "option"}
    assert not re.search(r"<script[^>]*\bsrc=", doc) and "cdnjs" not in doc and "https://" not in doc.split("tlabExpand")[-1]
    assert "\u2028" not in doc and "\u2029" not in doc
    frame = V.iframe(doc, 400)
    parser = _IframeParser()
    parser.feed(frame)
    assert parser.attrs["sandbox"] == "allow-scripts"
    assert parser.attrs["srcdoc"] == doc  # the attribute round-trips exactly: nothing broke out
    assert frame.count("<") == 1 + frame.count("</iframe")  # only the iframe's own tags are markup


def test_views_match_bertviz_own_params(bert, bert_tok):
    """Our packed params expand to exactly what bertviz's own head_view / model_view would send."""
    from bertviz import head_view, model_view

    r = A.compute_attention(bert, bert_tok, *A.FIRST_EXAMPLE)
    att4 = np.round(r.attention.astype(np.float64), 4)
    tensors = [torch.from_numpy(att4[i : i + 1]) for i in range(att4.shape[0])]
    for view, fn, extra in (("head", head_view, {}), ("model", model_view, {"display_mode": "light"})):
        theirs_html = fn(tensors, r.tokens, sentence_b_start=r.sentence_b_start, html_action="return", **extra).data
        theirs = json.loads(re.search(r"const params = (\{.*?\}); // HACK", theirs_html, re.S).group(1))
        ours, _ = V.view_params(view, r.attention, r.tokens, r.sentence_b_start)
        blob = V.unpack_attention(ours["__tlab"]["blob"], ours["__tlab"]["shape"])
        assert [e["name"] for e in ours["attention"]] == [e["name"] for e in theirs["attention"]]
        for o, t in zip(ours["attention"], theirs["attention"]):
            assert o["left_text"] == t["left_text"] and o["right_text"] == t["right_text"]
            rows, cols = slice(*o["attn"]["rows"]), slice(*o["attn"]["cols"])
            assert np.allclose(blob[:, :, rows, cols], np.array(t["attn"]), atol=1e-9)
        for key in set(theirs) - {"attention", "root_div_id"}:
            assert ours[key] == theirs[key], key


def test_view_rejects_mismatched_shapes():
    with pytest.raises(ValueError):
        V.head_view_html(np.zeros((1, 1, 3, 3)), ["a", "b"])


# ---------------------------------------------------------------------------- positions

def test_sinusoidal_encoding_values():
    pe = P.sinusoidal_encoding(50, 16)
    assert pe.shape == (50, 16)
    assert np.allclose(pe[0, 0::2], 0) and np.allclose(pe[0, 1::2], 1)
    assert np.isclose(pe[7, 0], math.sin(7)) and np.isclose(pe[7, 3], math.cos(7 / 10000 ** (2 / 16)))
    with pytest.raises(InputError):
        P.sinusoidal_encoding(0, 16)


def test_position_reports(bert, llama):
    rb = P.position_report(bert, n_positions=32)
    assert rb["learned_similarity"].shape == (32, 32) and rb["rotary"] is None
    assert np.allclose(np.diag(rb["learned_similarity"]), 1, atol=1e-5)
    rl = P.position_report(llama)
    assert rl["learned_similarity"] is None
    inv = np.array(rl["rotary"]["inv_freq"])
    assert inv[0] == 1.0 and np.all(np.diff(inv) < 0) and len(inv) == 4


# ---------------------------------------------------------------------------- plots (no gradio needed)

def test_plots_build_from_backend_data(llama, llama_tok):
    from components.attention import plots

    r = A.compute_attention(llama, llama_tok, "time flies like an arrow", "fruit flies")
    fig = plots.attention_heatmap(r.attention[1, 2], r.tokens, "t")
    assert np.allclose(np.array(fig.data[0].z), np.round(r.attention[1, 2], 4))
    assert len(set(fig.layout.xaxis.ticktext)) == len(r.tokens)  # repeated tokens stay distinct
    s = A.head_summary(r.attention, r.special)
    assert len(plots.summary_grid(s).data) == len(A.SUMMARY_METRICS)
    p = A.attention_math(llama, llama_tok, "time flies", 0, 0)
    assert len(plots.math_matrices(p).data) == 6 and len(plots.query_bars(p).data) == 2
    rep = P.position_report(llama)
    plots.sinusoid_heatmap(rep["sinusoidal"]), plots.rotary_plot(rep["rotary"])
