"""`/attention` and `/attention_math` through gradio_client against the running app (local profile)."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

INJECTION = '</script><img src=x onerror=alert(1)> "quotes" \\ backslash \u2028 end'


def _attention(client, text, text_b="", role="encoder", layer=-1):
    out = client.predict(text, text_b, role, layer, api_name="/attention")
    assert isinstance(out, (list, tuple))
    return out[0], out[1], out[2]


def _math(client, text, role="encoder", layer=0, head=0, query=-1, text_b=""):
    out = client.predict(text, text_b, role, layer, head, query, api_name="/attention_math")
    return out[0]


def _error(client, fn, *args, **kwargs) -> str:
    with pytest.raises(Exception) as info:
        fn(client, *args, **kwargs)
    return str(info.value)


def test_attention_pair_encoder(client):
    payload, head_html, model_html = _attention(client, "time flies like an arrow", "fruit flies like a banana")
    t = payload["num_tokens"]
    assert payload["tokens"][0] == "[CLS]" and payload["tokens"][payload["sentence_b_start"]] == "fruit"
    arr = np.array(payload["attention"])
    assert arr.shape == (6, 12, t, t) == tuple(payload["shape"])
    assert np.allclose(arr.sum(-1), 1, atol=3e-3) and np.allclose(arr, np.round(arr, 4))
    assert payload["model"]["role"] == "encoder" and payload["model"]["checkpoint"]
    for doc in (head_html, model_html):
        assert 'sandbox="allow-scripts"' in doc and "srcdoc=" in doc and "cdnjs" not in doc


def test_attention_decoder_is_causal(client):
    payload, _, _ = _attention(client, "The cat sat on the mat", role="decoder")
    arr = np.array(payload["attention"])
    assert arr.shape[:2] == (30, 9) and payload["causal"]
    assert np.all(np.triu(arr, 1) == 0)


def test_attention_one_layer(client):
    payload, _, _ = _attention(client, "time flies like an arrow", layer=3)
    assert payload["layers"] == [3] and np.array(payload["attention"]).shape[0] == 1


@pytest.mark.parametrize("text", ["", "   "])
def test_attention_empty_text(client, text):
    assert "Enter a text" in _error(client, _attention, text)


def test_attention_only_special_tokens(client):
    payload, head_html, _ = _attention(client, "[CLS] [SEP]")
    assert all(payload["special_tokens"]) and payload["num_tokens"] == 4
    assert "<iframe" in head_html


def test_attention_over_cap(client):
    msg = _error(client, _attention, "word " * 300)
    assert "256" in msg and "Shorten" in msg


def test_attention_over_view_cap_still_gives_heatmap_data(client):
    payload, head_html, model_html = _attention(client, "word " * 120)
    assert payload["attention"] is None and "96" in payload["note"]
    assert "96" in head_html and "<iframe" not in head_html and "<iframe" not in model_html
    # the decoder has 30 x 9 heads: its all-layers array stops earlier (49 tokens)
    payload, head_html, _ = _attention(client, "word " * 60, role="decoder")
    assert payload["attention"] is None and "49 tokens" in payload["note"] and "<iframe" in head_html
    payload, _, _ = _attention(client, "word " * 60, role="decoder", layer=29)
    assert np.array(payload["attention"]).shape == (1, 9, payload["num_tokens"], payload["num_tokens"])


def test_attention_bad_role_and_layer(client):
    assert "encoder" in _error(client, _attention, "hi", role="gpt9")
    assert "Layer 6" in _error(client, _attention, "hi", layer=6)


@pytest.mark.parametrize("role", ["encoder", "decoder"])
def test_attention_injection_is_data(client, role):
    payload, head_html, model_html = _attention(client, INJECTION, role=role)
    assert any("script" in t for t in payload["tokens"])
    for frame in (head_html, model_html):
        # Outside the srcdoc attribute, the only markup is the iframe itself.
        outside = re.sub(r'srcdoc="[^"]*"', "", frame)
        assert "<img" not in outside and "<script" not in outside
        doc = html.unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1))
        assert "<img" not in doc and "\\u003c" in doc  # the "<" tokens are there, escaped


def test_attention_math_encoder_and_decoder(client):
    p = _math(client, "time flies like an arrow", "encoder", layer=2, head=5, query=2)
    assert p["within_tolerance"] and p["max_abs_diff"] < 1e-4 and p["query_index"] == 2
    shapes = {m["name"]: m["shape"] for m in p["matrices"]}
    t = len(p["tokens"])
    assert shapes["Q"] == [t, 32] and shapes["weights"] == [t, t]
    d = _math(client, "time flies like an arrow", "decoder", layer=29, head=4)
    assert d["rotary"] and d["num_kv_heads"] == 3 and d["kv_head"] == 1 and d["max_abs_diff_layer"] < 1e-4
    w = np.array(next(m for m in d["matrices"] if m["name"] == "weights")["data"])
    assert np.all(np.triu(w, 1) == 0)


def test_attention_math_bad_input(client):
    assert "Enter a text" in _error(client, _math, "")
    assert "Head 12" in _error(client, _math, "hi", head=12)
    assert "Query token 50" in _error(client, _math, "hi", query=50)
    assert "256" in _error(client, _math, "word " * 300)
    p = _math(client, INJECTION, "decoder", layer=0, head=0)
    assert p["within_tolerance"]
