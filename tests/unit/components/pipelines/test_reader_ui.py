"""The Pipelines QA answer line for the reader trained here: a "no answer" shows the [CLS] margin."""

from __future__ import annotations

from components.pipelines import plots as show


def _result(no_answer: bool) -> dict:
    return {"no_answer": no_answer, "answer": "" if no_answer else "1851", "score": None if no_answer else 0.8,
            "answers": [{"answer": "1851", "score": 0.3, "start": 10, "end": 14}], "no_answer_score": 0.6,
            "no_answer_reply": "[CLS] (no answer)", "margin": -1.25, "threshold": 0.5, "absent_terms": [],
            "context": "Built in  1851."}


def test_no_answer_names_cls_and_shows_the_margin():
    text = show.answer_markdown(_result(True))
    assert text.startswith(f"### {show.NO_ANSWER}")
    assert "[CLS\\] \\(no answer" in text and "best span - [CLS] = -1.25" in text and "+0.50" in text
    assert show.answer_highlight(_result(True))["entities"] == []  # nothing marked when it refuses


def test_an_answer_has_no_margin_line():
    text = show.answer_markdown(_result(False))
    assert text.startswith("### 1851") and "best span - [CLS]" not in text


def test_span_decoding_results_get_no_reader_line():
    r = {**_result(True), "threshold": None, "margin": -0.5, "no_answer_reply": "not in the text"}
    assert "best span - [CLS]" not in show.answer_markdown(r)
