"""`/attribute` through gradio_client against the running app (local profile)."""

from __future__ import annotations

import pytest

TEXT = "The food was cold and the waiter was rude, but the dessert was lovely."


def test_attribute_by_keyword_returns_scores_and_checks(client):
    r, badge, summary, strip, *_ = client.predict(text=TEXT, task="sentiment", steps=16, random_orders=3,
                                                  methods=["integrated_gradients", "occlusion", "attention_rollout"],
                                                  api_name="/attribute")
    assert r["methods"] == ["integrated_gradients", "occlusion", "attention_rollout"]
    assert [t["token"] for t in r["tokens"]][:3] == ["The", "food", "was"]
    assert all(len(s) == len(r["tokens"]) for s in r["scores"].values())
    c = r["checks"]
    assert set(c["deletion"]["curves"]) == set(r["methods"])
    # named only where its conditions hold (backend.why.claims); else the result says why not
    assert c["most_faithful"] == c["faithfulness"]["method"] and c["faithfulness"]["text"]
    assert (c["most_faithful"] in r["methods"]) == (c["faithfulness"]["status"] == "claimed")
    assert c["completeness"]["first_try"]["steps"] == 16 and c["completeness"]["steps"] in (16, 32, 64)
    assert c["agreement"]["methods"] == r["methods"]
    assert r["model"]["role"] == "sentiment" and "Served by" in badge
    assert "Completeness" in summary and "why-tok" in strip
    assert r["timing"]["one_forward"] > 0 and r["seconds"] > 0


def test_attribute_next_token_with_a_contrast(client):
    r, *_ = client.predict(text="The capital of France is", task="next_token", target="Paris", contrast="London",
                           methods=["occlusion", "gradient_x_input"], random_orders=2, api_name="/attribute")
    assert r["prediction"]["contrast"]["token"] == " London" and r["quantity"].startswith("logit(")


@pytest.mark.parametrize("kwargs, word", [({"task": "poetry"}, "task"), ({"methods": ["lime"]}, "lime"),
                                          ({"steps": 10_000}, "steps"), ({"task": "zero_shot"}, "labels")])
def test_attribute_bad_input_is_readable(client, kwargs, word):
    with pytest.raises(Exception) as info:
        client.predict(**{"text": TEXT, **kwargs}, api_name="/attribute")
    assert word in str(info.value)


def test_attribute_explains_a_qa_answer_span_by_question_and_context_tokens(client):
    r, *_ = client.predict(text="The Eiffel Tower is in Paris. It was built in 1889.", task="qa",
                           question="When was the Eiffel Tower built?", methods=["occlusion"], random_orders=2,
                           api_name="/attribute")
    assert "1889" in r["prediction"]["span"]["answer"]
    assert {t["part"] for t in r["tokens"]} == {"question", "context"}
