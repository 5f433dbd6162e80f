"""The Why tab's promises on the real local models: occlusion's score for a token is the change in
the task's own endpoint's output when that token is removed from the text, and integrated
gradients keep their completeness promise (gap under 5%) on the shipped examples."""

from __future__ import annotations

import os

import pytest

from components.pipelines.examples import LETTER, NER_EXAMPLE, PRAISE, QUESTION
from components.why.ui import EXAMPLE

SHIPPED = [EXAMPLE, LETTER, PRAISE, QUESTION]
ONLY = ["occlusion", "integrated_gradients"]


@pytest.fixture(scope="module")
def backends():
    old = os.environ.get("TLAB_PROFILE")
    os.environ["TLAB_PROFILE"] = "local"
    from backend import hub, pipelines, why as attribution

    yield attribution, pipelines, hub
    if old is None:
        os.environ.pop("TLAB_PROFILE", None)
    else:
        os.environ["TLAB_PROFILE"] = old


def _without(text: str, tok: dict) -> str:
    """The text with one token's characters removed (and one space beside it, so words stay apart)."""
    start, end = tok["start"], tok["end"]
    if end < len(text) and text[end] == " ":
        end += 1
    elif start > 0 and text[start - 1] == " ":
        start -= 1
    return text[:start] + text[end:]


def _whole_words(text: str, tokens: list[dict], tokenizer, n: int = 4) -> list[int]:
    """Indices of tokens whose removal from the text leaves exactly the other tokens' ids."""
    ids = tokenizer(text)["input_ids"]
    picked = []
    for j, tok in enumerate(tokens):
        kept = ids[:tok["index"]] + ids[tok["index"] + 1:]
        if tokenizer(_without(text, tok))["input_ids"] == kept:
            picked.append(j)
        if len(picked) == n:
            break
    return picked


def _score_of(result: dict, label: str) -> float:
    r = result["results"][0]
    return r["scores"][r["labels"].index(label)]


def test_sentiment_occlusion_is_the_change_in_classify(backends):
    attribution, pipelines, hub = backends
    tokenizer = hub.load("sentiment").tokenizer
    for text in (EXAMPLE, PRAISE):
        r = attribution.attribute(text, task="sentiment", methods=ONLY, steps=8, random_orders=2)
        label = r["prediction"]["label"]
        full = _score_of(pipelines.classify(text), label)
        assert full == pytest.approx(r["value"], abs=1e-4)
        picked = _whole_words(text, r["tokens"], tokenizer)
        assert len(picked) >= 3
        for j in picked:
            without = _score_of(pipelines.classify(_without(text, r["tokens"][j])), label)
            assert r["scores"]["occlusion"][j] == pytest.approx(full - without, abs=2e-4), r["tokens"][j]


def test_zero_shot_occlusion_is_the_change_in_zero_shot(backends):
    attribution, pipelines, hub = backends
    text, labels = "The team won the championship after a dramatic final.", "sport, politics, cooking"
    r = attribution.attribute(text, task="zero_shot", labels=labels, methods=ONLY, steps=8, random_orders=2)
    label = r["prediction"]["label"]
    full = _score_of(pipelines.zero_shot(text, labels), label)
    assert full == pytest.approx(r["value"], abs=1e-4)
    for j in _whole_words(text, r["tokens"], hub.load("zero_shot").tokenizer):
        without = _score_of(pipelines.zero_shot(_without(text, r["tokens"][j]), labels), label)
        assert r["scores"]["occlusion"][j] == pytest.approx(full - without, abs=2e-4)


@pytest.mark.parametrize("text", SHIPPED)
def test_integrated_gradients_gap_under_5_percent_at_the_default_steps(backends, text):
    attribution = backends[0]
    r = attribution.attribute(text, task="sentiment", methods=["integrated_gradients"], random_orders=1)
    comp = r["checks"]["completeness"]
    first = comp["first_try"]  # the default steps, before any re-run with more
    assert first["steps"] == 32 and first["relative_gap"] < 0.05, comp
    assert comp["steps"] == 32  # so no re-run was needed
    assert sum(r["scores"]["integrated_gradients"]) == pytest.approx(comp["sum_of_attributions"], abs=1e-3)


def test_ner_explains_a_token_label_on_the_model_trained_here(backends):
    attribution = backends[0]
    r = attribution.attribute(NER_EXAMPLE, task="ner", word="Cupertino", methods=["occlusion", "gradient_x_input"],
                              random_orders=2)
    focus = r["prediction"]["focus"]  # the word's first WordPiece, which carries the word's tag
    assert focus["start"] == NER_EXAMPLE.index("Cupertino") and "Cupertino".startswith(focus["token"])
    assert r["prediction"]["label"].endswith("LOC"), r["prediction"]
    assert focus["start"] not in [t["start"] for t in r["tokens"]]  # the tagged token is not scored against itself


def test_decoder_contrast_prefers_the_country_for_its_capital(backends):
    attribution = backends[0]
    r = attribution.attribute("The capital of France is", task="next_token", target="Paris", contrast="London",
                              methods=["occlusion", "gradient_x_input"], random_orders=2)
    assert r["prediction"]["target"]["token"] == " Paris" and r["value"] > 0
    words = [t["token"].strip() for t in r["tokens"]]
    occ = r["scores"]["occlusion"]
    assert words[max(range(len(occ)), key=occ.__getitem__)] == "France"  # without 'France', London is as good
