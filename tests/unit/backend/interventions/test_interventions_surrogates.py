"""`/intervene` and `/sweep_heads` reply with the text as checked, U+FFFD where a lone surrogate
("a\\ud800b") stood: echoing the text as sent would make a reply whose JSON cannot be written ("This
action produced a result its json cannot show") after seconds of model work."""

from __future__ import annotations

import json

import pytest

from backend import interventions
from tests.helpers.served_models import folders, served  # noqa: F401  (tiny models through the hub)

pytestmark = pytest.mark.unit

LONE = "a\ud800b"


def _utf8(reply: dict) -> str:
    return json.dumps(reply, ensure_ascii=False).encode("utf-8").decode("utf-8")  # raises on a surrogate


@pytest.mark.parametrize("model", ["decoder", "encoder"])
def test_intervene_replies_with_the_checked_text(served, model):
    r = interventions.intervene(model, LONE, "L0H0=0", new_tokens=1, top_k=2)
    assert r["text"] == "a\ufffdb" and "\ud800" not in _utf8(r)


@pytest.mark.parametrize("model", ["decoder", "encoder"])
def test_sweep_heads_replies_with_the_checked_text(served, model):
    r = interventions.sweep_heads(model, LONE, 0)
    assert r["text"] == "a\ufffdb" and "\ud800" not in _utf8(r)
