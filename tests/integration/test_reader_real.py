"""The reader trained here (chapter 7) with the real all-MiniLM-L6-v2, on the blind set HELD_OUT_4.

HELD_OUT_4 (tests/data/qa/held_out_4.jsonl) was written by someone who had not seen the reader or its
training data, and measured once with both local methods (bench/qa_readers.py, bench/results/qa.md).
Floors: what was measured, less a small margin. Through `tasks.qa`, as the Pipelines tab serves it.
"""

from __future__ import annotations

import statistics
import time

import pytest

from backend import hub
from backend.engines.qa import squad_metrics
from backend.pipelines import tasks as P
from backend.runtime import config
from tests.helpers.qa_sets import load

HELD_OUT_4 = load("held_out_4")

MIN_RIGHT, MAX_WRONG, MIN_REFUSED = 32, 16, 11  # measured 35/50 right, 13/71 wrong, 13/21 refused (bench/results/qa.md)


@pytest.fixture(scope="module")
def reader_lm():
    lm = hub.load("qa")
    if lm.method != config.METHOD_FINETUNED:
        pytest.skip("the local profile's qa role is not the reader trained here")
    return lm


@pytest.fixture(scope="module")
def results(reader_lm):
    out = []
    for context, question, expected in HELD_OUT_4:
        start = time.perf_counter()
        r = P.qa(reader_lm, question, context, top_n=3)
        out.append((context, question, expected, r, time.perf_counter() - start))
    return out


def _pred(r: dict) -> str:
    return "" if r["no_answer"] or not r["answers"] else r["answers"][0]["answer"]


def test_the_reader_is_built_here_and_described(reader_lm):
    d = reader_lm.describe()
    assert d["method"] == config.METHOD_FINETUNED and "span head" in d["classifier"]
    assert type(reader_lm.model).__name__ == "BertForQuestionAnswering"
    assert isinstance(reader_lm.model.config.null_threshold, float)


def test_every_answer_is_its_context_at_its_offsets(results):
    for context, question, _, r, _ in results:
        for a in r["answers"]:
            assert context[a["start"]:a["end"]] == a["answer"], (question, a)
        if not r["no_answer"]:
            assert context[r["start"]:r["end"]] == r["answer"]


def test_right_wrong_and_refused_stay_near_what_was_measured(results):
    has = [(q, _pred(r), e) for _, q, e, r, _ in results if e is not None]
    right = [q for q, p, e in has if p and squad_metrics.score([e], p)[1] >= 0.5]
    wrong = [(q, p, e) for q, p, e in has if p and squad_metrics.score([e], p)[1] < 0.5]
    wrong += [(q, p, None) for _, q, e, r, _ in results if e is None and (p := _pred(r))]
    refused = [q for _, q, e, r, _ in results if e is None and r["no_answer"]]
    assert len(right) >= MIN_RIGHT, [(q, p, e) for q, p, e in has if q not in right]
    assert len(wrong) <= MAX_WRONG, wrong
    assert len(refused) >= MIN_REFUSED


def test_a_question_takes_well_under_a_second(results):
    """The issue asks for a median under 0.3 s on the local profile (measured in bench/results/qa.md); here a
    generous bound, since this box is shared."""
    assert statistics.median(s for *_, s in results) < 1.5


def test_the_retriever_reader_evaluation_over_the_glossary(reader_lm):
    """Chapter 7's evaluation (search.api.evaluate_reader): recall@k grows with k (measured 0.81 at 1, 0.94 at
    3, 1.0 at 10), and the reader's scores on gold passages and end to end are percentages of 36 questions."""
    from backend.search import api as search_api

    out = search_api.evaluate_reader()
    recall = [r["recall"] for r in out["recall"]]
    assert recall == sorted(recall) and recall[0] >= 0.7 and recall[-1] >= 0.95
    assert out["questions"] == 36 and 0 <= out["reader_on_gold"]["f1"] <= 100
    assert [r["k"] for r in out["end_to_end"]] == [1, 3, 5]
    for row in out["rows"]:
        assert row["rank_of_gold"] is None or row["rank_of_gold"] >= 1


# The answer-type check (backend/engines/qa/answer_type.py) on the reader's own spans: the price of the
# product for a question about its replacement part is set aside, and the page says why.
BRAVA = ("The Brava X2 coffee machine costs 249 euros. Its water filters need changing every two months, and the "
         "machine comes with a two-year warranty.")
KLEEN = ("The Kleen R9 robot vacuum costs 349 euros in most shops. Spare brushes are sold in packs of three, and the "
         "battery lasts about two hours.")


def test_another_things_price_is_set_aside_and_said(reader_lm):
    r = P.qa(reader_lm, "What is the price of the water filters?", BRAVA, top_n=3)
    assert r["no_answer"] and [a["answer"] for a in r["set_aside"]] == ["249 euros"]
    assert any("'249 euros' scored higher but was set aside" in n and "another thing's" in n for n in r["notices"])
    kept = P.qa(reader_lm, "How much does the Brava X2 cost?", BRAVA, top_n=3)
    assert not kept["no_answer"] and kept["answer"] == "249 euros" and kept["set_aside"] == []


def test_a_count_is_set_aside_for_a_price(reader_lm):
    r = P.qa(reader_lm, "What is the price of a pack of spare brushes?", KLEEN, top_n=3)
    assert r["no_answer"] and r["set_aside"][0]["answer"] == "three"
    assert "names none" in r["set_aside"][0]["reason"]
    assert P.qa(reader_lm, "How long does the battery last?", KLEEN)["answer"] == "about two hours"
