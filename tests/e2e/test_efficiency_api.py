"""`/efficiency` through gradio_client against the running app (local profile: SmolLM2 + MiniLM)."""

from __future__ import annotations

import pytest

from backend.efficiency import measure


def test_efficiency_small_run_by_keyword(client):
    r, *_ = client.predict(prompts=2, texts=2, new_tokens=8, encoder=True, api_name="/efficiency")
    dec, enc = r["decoder"], r["encoder"]
    assert [row["precision"] for row in dec["rows"]] == ["fp32", "int8"]
    assert "SmolLM2" in r["model"]["checkpoint"] and dec["int8_model"]["dtype"].startswith("int8")
    assert dec["agreement"]["of"] == 2 and len(dec["prompts"]) == 2
    # first_8 counts the prompts whose int8 text does not diverge from fp32's before token 8
    same_8 = sum(1 for p in dec["prompts"] if p["first_divergence"] is None or p["first_divergence"] >= 8)
    assert dec["agreement"]["first_8"] == same_8
    fp, q = dec["rows"]
    assert q["memory_mb"] < 0.6 * fp["memory_mb"] and q["disk_mb"] < 0.6 * fp["disk_mb"]
    assert fp["tokens_per_s"] > 0 and q["tokens_per_s"] > 0
    assert 0.8 < dec["perplexity_ratio"] < 1.25
    assert enc["model"]["checkpoint"].endswith("all-MiniLM-L6-v2")
    assert enc["tasks"]["topic"]["items"] == 2 and enc["rows"][1]["agreement"] >= 0.5
    assert r["settings"] == {"prompts": 2, "texts": 2, "new_tokens": 8, "encoder": True,
                             "perplexity_max_tokens": measure.PERPLEXITY_MAX_TOKENS}  # the notebook reads its cut here


@pytest.mark.parametrize("kwargs, word", [({"prompts": 0}, "prompts"), ({"texts": 99}, "texts"),
                                          ({"new_tokens": "many"}, "new_tokens")])
def test_efficiency_bad_input_is_readable(client, kwargs, word):
    with pytest.raises(Exception) as info:
        client.predict(**{"prompts": 1, "texts": 1, "new_tokens": 8, "encoder": False, **kwargs}, api_name="/efficiency")
    assert word in str(info.value)
