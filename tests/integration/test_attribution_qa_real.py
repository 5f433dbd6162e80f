"""'Why this span?' on the reader trained here (the local profile's qa role): the explained number is
the span's score /qa reports, and occlusion's score for a question or context word is the change in
that score when /qa is asked again without the word."""

from __future__ import annotations

import os

import pytest

from components.pipelines.examples import QA_CONTEXT, QA_QUESTIONS

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


def _without(text: str, start: int, end: int) -> str:
    if end < len(text) and text[end] == " ":
        end += 1
    elif start > 0 and text[start - 1] == " ":
        start -= 1
    return text[:start] + text[end:]


def _span_logit(result: dict, answer: str) -> float:
    found = [a["logit"] for a in result["answers"] if a["answer"] == answer]
    assert found, (answer, [a["answer"] for a in result["answers"]])
    return found[0]


def test_qa_occlusion_is_the_change_in_the_span_score_qa_reports(backends):
    attribution, pipelines, hub = backends
    question = QA_QUESTIONS[0]
    r = attribution.attribute(QA_CONTEXT, task="qa", question=question, methods=ONLY, steps=32, random_orders=2)
    assert r["model"]["role"] == "qa"
    answer = r["prediction"]["span"]["answer"]
    full = pipelines.qa(QA_CONTEXT, question, top_n=20)
    assert full["answer"] == answer  # the reader's own answer is what is explained
    assert _span_logit(full, answer) == pytest.approx(r["value"], abs=2e-4)
    tok = hub.load("qa").tokenizer
    ids = tok(question, QA_CONTEXT)["input_ids"]
    checked = {"question": 0, "context": 0}
    for j, t in enumerate(r["tokens"]):
        q, c = question, QA_CONTEXT
        if t["part"] == "question":
            q = _without(question, t["start"], t["end"])
        else:
            c = _without(QA_CONTEXT, t["start"], t["end"])
        if tok(q, c)["input_ids"] != ids[:t["index"]] + ids[t["index"] + 1:] or checked[t["part"]] >= 3:
            continue  # only whole words whose removal leaves exactly the other tokens
        without = _span_logit(pipelines.qa(c, q, top_n=20), answer)
        assert r["scores"]["occlusion"][j] == pytest.approx(r["value"] - without, abs=5e-4), t
        checked[t["part"]] += 1
    assert checked == {"question": 3, "context": 3}
    comp = r["checks"]["completeness"]
    assert comp["first_try"]["steps"] == 32 and comp["relative_gap"] < 0.05, comp
