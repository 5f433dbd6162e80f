"""/evaluate_reader through gradio_client: chapter 7's evaluation of the retriever and the reader
trained here, on the glossary's questions; every shown number is the returned data's."""

from __future__ import annotations

import pytest

from backend.search.reader_eval import load_questions


@pytest.fixture(scope="module")
def evaluated(client):
    return client.predict(api_name="/evaluate_reader")


def test_the_evaluation_covers_every_question_and_its_numbers_add_up(evaluated):
    _, _, _, _, ev = evaluated
    questions = load_questions()
    assert ev["questions"] == len(questions) == len(ev["rows"]) and ev["passages"] > 100
    assert [r["question"] for r in ev["rows"]] == [q["question"] for q in questions]
    ranks = [r["rank_of_gold"] for r in ev["rows"]]
    for point in ev["recall"]:  # recall@k is the share of questions whose gold passage ranks k or better
        assert point["recall"] == pytest.approx(sum(1 for r in ranks if r is not None and r <= point["k"]) / len(ranks))
    recalls = [p["recall"] for p in ev["recall"]]
    assert recalls == sorted(recalls) and recalls[-1] > 0.5  # the embedder finds most gold passages in 20
    gold = ev["reader_on_gold"]
    assert gold["f1"] == pytest.approx(100 * sum(r["on_gold_f1"] for r in ev["rows"]) / len(ranks))
    # the reader trained here on its gold passage: measured EM 19.4, F1 27.2 (it says "no answer" to many of
    # these long glossary passages); a floor well below that, so a broken reader fails
    assert gold["exact"] <= gold["f1"] and gold["f1"] > 10
    assert [p["k"] for p in ev["end_to_end"]] == [1, 3, 5]
    assert ev["reader_model"]["method"] == "fine-tuned" and "MiniLM" in ev["retriever_model"]["checkpoint"]


def test_the_page_shows_the_returned_numbers_and_a_second_run_is_the_same(client, evaluated):
    summary, plot, table, badges, ev = evaluated
    assert f"F1 {ev['reader_on_gold']['f1']:.1f}%" in summary
    for p in ev["end_to_end"]:
        assert f"top {p['k']}: EM {p['exact']:.1f}%, F1 {p['f1']:.1f}%" in summary
    assert "recall@k" in summary and "Exact match" in summary  # the terms are defined where they appear
    lines = table.splitlines()  # a markdown table: a header, a rule, one row per question in order
    assert "rank of gold passage" in lines[0] and len(lines) == 2 + ev["questions"]
    assert "top 1" in lines[0] and f"top {ev['end_to_end'][-1]['k']}" in lines[0]
    for line, r in zip(lines[2:], ev["rows"]):
        assert f"({100 * r['on_gold_f1']:.0f})" in line and (str(r["rank_of_gold"]) in line or "not in the top" in line)
    assert "Reader: Served by" in badges and "Retriever: Served by" in badges
    *_, again = client.predict(api_name="/evaluate_reader")
    assert again["cached"] is True and ev["cached"] is False
    assert {k: v for k, v in again.items() if k != "cached"} == {k: v for k, v in ev.items() if k != "cached"}
