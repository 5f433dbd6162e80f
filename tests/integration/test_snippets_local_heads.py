"""The Pipelines' /ner and /qa snippets reproduce a local run: on the local profile /ner is served by
the NER model trained here (token head, word shapes) and /qa by the reader trained here (span head, [CLS] and
its threshold). Each endpoint runs here, in-process; its snippet then runs in the session's fresh interpreter
(snippet_runner) and must give the same entities (text, type, offsets, score within 1e-4) for the "simple" and
"first" aggregations, and the same answers (spans, scores within 1e-4) and no-answer decision, a span set aside
by the app's answer-type check included."""

from __future__ import annotations

import pytest

from backend import pipelines, snippets

NER_TEXTS = ["Angela Merkel visited the Wolkswagen plant in Wolfsburg with McDonald's CEO.",
             "Ms. O'Neil flew from JFK to Zürich on Tuesday."]
CURIE = "Marie Curie was a physicist who worked in Paris at the Sorbonne. She won two Nobel prizes."
BRAVA = ("The Brava X2 coffee machine costs 249 euros. Its water filters need changing every two months, and the "
         "machine comes with a two-year warranty.")  # tests/integration/test_reader_real.py: 249 euros is set aside
TAKE = {"ner": {"entities": "[[(t[e['start']:e['end']], e.get('entity_group', e.get('entity')), e['start'], e['end'], "
                            "float(e['score'])) for e in es] for t, es in zip(texts, out)]"},
        "qa": {"no_answer": "no_answer", "answer": "None if answer is None else [answer['start'], answer['end']]",
               "answers": "[[a['answer'], a['start'], a['end'], a['score']] for a in answers]"}}


@pytest.fixture(scope="module")
def found(snippet_runner):
    """{case: (app's result, what its snippet gave back)} for two NER aggregations and two QA questions."""
    runs = []
    for aggregation in ("simple", "first"):
        inputs = {"text": "\n".join(NER_TEXTS), "aggregation": aggregation, "batch": True}
        runs.append((f"ner_{aggregation}", "ner", inputs, pipelines.ner(inputs["text"], aggregation, True)))
    for name, question, context in [("qa_answer", "Where did Marie Curie work?", CURIE),
                                    ("qa_set_aside", "What is the price of the water filters?", BRAVA)]:
        inputs = {"context": context, "question": question, "top_n": 3}
        runs.append((name, "qa", inputs, pipelines.qa(context, question, top_n=3)))
    cases = []
    for name, endpoint, inputs, result in runs:
        assert result["method"] == "fine-tuned", (name, result.get("model"))  # the model trained here served
        python = snippets.for_result(endpoint, inputs, result)["python"]
        assert "not this run's" not in python, name
        cases.append({"name": name, "python": python, "take": TAKE[endpoint]})
    back = snippet_runner.run(cases)
    return {name: (result, back[name]) for name, _, _, result in runs}


@pytest.mark.parametrize("aggregation", ["simple", "first"])
def test_the_ner_snippet_gives_the_apps_entities(found, aggregation):
    result, got = found[f"ner_{aggregation}"]
    assert result["aggregation"] == aggregation
    want = [[(e["word"], e["entity_group"], e["start"], e["end"], e["score"]) for e in r["entities"]]
            for r in result["results"]]
    assert sum(map(len, want)) >= 4  # the texts have entities to compare
    assert [[tuple(e[:4]) for e in es] for es in got["entities"]] == [[e[:4] for e in es] for es in want]
    for got_row, want_row in zip(got["entities"], want):
        for g, w in zip(got_row, want_row):
            assert g[4] == pytest.approx(w[4], abs=1e-4), (g, w)


@pytest.mark.parametrize("case", ["qa_answer", "qa_set_aside"])
def test_the_qa_snippet_gives_the_readers_answers(found, case):
    result, got = found[case]
    assert got["no_answer"] == result["no_answer"]
    assert got["answer"] == (None if result["no_answer"] else [result["start"], result["end"]])
    want = [[a["answer"], a["start"], a["end"], a["score"]] for a in result["answers"]]
    assert [a[:3] for a in got["answers"]] == [a[:3] for a in want] and want
    assert [a[3] for a in got["answers"]] == pytest.approx([a[3] for a in want], abs=1e-4)
    if case == "qa_set_aside":  # the answer-type check's decision, as the app made it
        assert result["no_answer"] and [a["answer"] for a in result["set_aside"]] == ["249 euros"]
    else:
        assert not result["no_answer"] and result["set_aside"] == []
