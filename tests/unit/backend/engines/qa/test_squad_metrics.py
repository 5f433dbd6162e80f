"""EM and token F1 as the official SQuAD 2.0 script defines them (transformers 5 no longer ships
`transformers.data.metrics.squad_metrics`; the expected values are the script's, worked by hand)."""

from __future__ import annotations

import pytest

from backend.engines.qa import squad_metrics as m


@pytest.mark.parametrize("text, norm", [
    ("The Eiffel Tower!", "eiffel tower"),
    ("  an  apple, a pear ", "apple pear"),
    ("Theatre", "theatre"),  # 'the' only as a whole word
    ("1,230 km", "1230 km"),  # punctuation goes, even inside numbers
    ("", ""),
])
def test_normalize(text, norm):
    assert m.normalize_answer(text) == norm


def test_exact_and_f1():
    assert m.compute_exact("in 1851", "In 1851.") == 1
    assert m.compute_exact("1851", "in 1851") == 0
    assert m.compute_f1("1851", "in 1851") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert m.compute_f1("the city council of Lyon", "council of Lyon") == pytest.approx(1.0 * 0 + 2 * 1 * 0.75 / 1.75)
    assert m.compute_f1("fewer than twenty barges", "twenty barges a month") == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert m.compute_f1("x y x", "x x x") == pytest.approx(2 / 3)  # counts clipped: 2 common of 3 and 3
    assert m.compute_f1("a b a", "a a a") == 0.0  # articles go first: "b" against nothing
    assert m.compute_f1("Paris", "London") == 0.0


def test_no_answer_scoring():
    assert m.score([], "") == (1, 1.0)  # unanswerable, predicted no answer
    assert m.score([], "1851") == (0, 0.0)
    assert m.score(["1851"], "") == (0, 0.0)
    assert m.score(["the"], "") == (1, 1.0)  # a gold answer that normalises to nothing counts as none


def test_best_over_gold_answers_and_splits():
    out = m.evaluate([["1851", "in 1851"], [], ["Lyon"], []], ["in 1851", "", "Paris", "Lyon"])
    assert out["total"] == 4
    assert out["exact"] == pytest.approx(50.0)
    assert out["HasAns_total"] == 2 and out["NoAns_total"] == 2
    assert out["HasAns_exact"] == pytest.approx(50.0) and out["NoAns_exact"] == pytest.approx(50.0)
    assert out["f1"] == pytest.approx(50.0)
    with pytest.raises(ValueError):
        m.evaluate([[]], [])
