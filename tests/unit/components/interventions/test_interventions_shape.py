"""The Interventions pickers offer the served model's own heads (a 9-head decoder gets heads 0-8, never
heads /intervene would refuse)."""

from __future__ import annotations

import pytest

from backend import interventions
from backend.runtime.errors import InputError
from tests.helpers.served_models import folders, served  # noqa: F401  (tiny models through the hub)


def test_model_shape_is_the_served_models(served):
    assert interventions.model_shape("decoder") == {"role": "decoder", "family": "llama", "num_layers": 2,
                                                    "num_heads": 6, "head_dim": 8}
    enc = interventions.model_shape("encoder")
    assert (enc["family"], enc["num_layers"], enc["num_heads"]) == ("bert", 2, 4)


def test_every_head_the_shape_offers_is_accepted_and_the_next_is_refused(served):
    shape = interventions.model_shape("decoder")
    last = shape["num_heads"] - 1
    interventions.intervene("decoder", "time flies", f"L0H{last}=0", new_tokens=1, top_k=2)
    with pytest.raises(InputError, match=f"head {last + 1} does not exist"):
        interventions.intervene("decoder", "time flies", f"L0H{last + 1}=0", new_tokens=1, top_k=2)


def test_bad_role_is_refused(served):
    with pytest.raises(InputError):
        interventions.model_shape("vision")


def test_the_pickers_offer_exactly_the_served_models_heads(served):
    from components.interventions import ui

    layers, heads = ui.pick_shape("decoder", 0, "head 7")
    assert [c[0] if isinstance(c, (list, tuple)) else c for c in layers["choices"]] == [0, 1]
    names = [c[0] if isinstance(c, (list, tuple)) else c for c in heads["choices"]]
    assert [n for n in names if n.startswith("head ")] == [f"head {h}" for h in range(6)]  # 6 heads, not 12
    assert heads["value"] == "head 0"  # head 7 does not exist here: back to head 0
