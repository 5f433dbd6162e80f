"""Sparse and linear attention on the packaged models' own queries and keys (all-MiniLM-L6-v2 and
SmolLM2-135M): a window over the whole text gives full attention back on every layer and head, and
BigBird's global tokens keep the attention these models put on their first tokens, which a plain
window of the same reach loses (so the block-sparse output stays closer to full attention's)."""

from __future__ import annotations

import pytest

from backend.scratch import attention_cost_api as api


@pytest.mark.parametrize("role", ["encoder", "decoder"])
def test_a_window_over_the_whole_text_is_full_attention_on_every_head(role):
    d = api.sparse_attention("Time flies like an arrow; fruit flies like a banana.", role, window=256,
                             block=8, global_tokens=0, random_blocks=0)
    assert max(max(row) for row in d["errors"]["sliding window"]) < 1e-4
    assert d["num_layers"] == (6 if role == "encoder" else 30)


@pytest.mark.parametrize("role", ["encoder", "decoder"])
def test_global_tokens_keep_the_weight_a_window_loses(role):
    d = api.sparse_attention(role=role)  # the default text (>100 tokens), window 16, blocks of 16, 2 global
    cost = {r["method"]: r for r in d["cost"]}
    assert d["num_tokens"] > 100
    assert cost["block-sparse"]["weight_kept"] > cost["sliding window"]["weight_kept"] + 0.1
    assert d["mean_error"]["block-sparse"] < d["mean_error"]["sliding window"]
    assert d["mean_error"]["linear"] > 0.2  # elu + 1 is not softmax: its output is far from the model's
