"""Unit: chapter 6's summary checks on planted cases: every number and name a summary adds is
flagged with its exact offsets, the ones its source holds (in any surface form) are not; the
cut-at-the-limit note; MMR's picks; the ROUGE table; and the checks on /summarize's result."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import BertForTokenClassification

from backend import pipelines
from backend.pipelines import api, summary_checks
from backend.pipelines.extractive import extractive_summary, mmr_pick
from backend.pipelines.metrics import split_sentences
from backend.engines.tasks.support import capitalised_spans, check_support, cut_at_limit, numbers
from tests.helpers.tiny_models import minilm_tokenizer, tiny_bert

SOURCE = ("The city council of Lyon voted on Monday to close the old river port, built in 1851. "
          "The site will become housing for about 3,000 people. Fishermen protested outside the town hall. "
          "Fewer than twenty barges a month still use the port. Work on the housing starts in 2027, "
          "and costs 4.5 million euros.")


def flagged(r, kind):
    return [i["text"] for i in r["unsupported"] if i["kind"] == kind]


def assert_offsets(summary, r):
    for i in r["unsupported"]:
        assert summary[i["start"]:i["end"]] == i["text"], i


# ------------------------------------------------------------------------------ numbers

@pytest.mark.parametrize("added", ["thirty", "2,500", "2500", "1.5 million", "thirty-one", "40%", "two hundred",
                                   "1852", "seven", "3.5", "twelve thousand"])
def test_every_number_a_summary_adds_is_flagged_at_its_offsets(added):
    summary = f"The council closed the port, and {added} people protested in Lyon."
    r = check_support(summary, SOURCE)
    assert flagged(r, "number") == [added]
    start = summary.index(added)
    item = next(i for i in r["unsupported"] if i["kind"] == "number")
    assert (item["start"], item["end"]) == (start, start + len(added))
    assert r["counts"]["number"] == 1 and r["checked"]["number"] == 1


@pytest.mark.parametrize("present", ["3,000", "3000", "three thousand", "1851", "twenty", "20", "4.5 million",
                                     "4,500,000", "2027"])
def test_numbers_in_the_source_in_any_form_are_not_flagged(present):
    summary = f"The council closed the port; {present} people were housed."
    r = check_support(summary, SOURCE)
    assert flagged(r, "number") == [] and r["checked"]["number"] == 1


def test_number_reading():
    found = numbers("3,000 and 3000, three thousand, 1.5 million, 30% and twenty-five; two hundred and fifty; "
                    "COVID-19, one of them")
    assert [n["value"] for n in found] == [3000, 3000, 3000, 1.5e6, 30, 25, 250]
    assert found[-1]["text"] == "two hundred and fifty"  # not "one": a pronoun here, and not COVID-19's 19


# -------------------------------------------------------------------------------- names

def test_every_name_a_summary_adds_is_flagged_and_source_names_are_not():
    summary = "Mayor Anne Dubois of Paris voted to close the Lyon port. Fishermen protested."
    r = check_support(summary, SOURCE)
    assert flagged(r, "name") == ["Anne Dubois", "Paris"]
    assert flagged(r, "word") == ["Mayor"]  # capitalised for its sentence: read as a word, still flagged
    assert all(i["found_by"] == "capitalised" for i in r["unsupported"] if i["kind"] == "name")
    assert_offsets(summary, r)
    assert r["checked"]["name"] == 3  # Lyon is named, and supported; "Fishermen" starts a sentence


def test_ner_entities_are_checked_first_and_cover_lowercase_names():
    summary = "the port of marseille closed in Lyon."
    start = summary.index("marseille")
    ents = [{"start": start, "end": start + len("marseille"), "entity_group": "LOC", "word": "marseille"},
            {"start": summary.index("Lyon") - 1, "end": summary.index("Lyon") + 5, "entity_group": "LOC"}]
    r = check_support(summary, SOURCE, ents)
    names = [i for i in r["unsupported"] if i["kind"] == "name"]
    assert [(n["text"], n["found_by"], n["start"]) for n in names] == [("marseille", "ner", start)]
    assert r["checked"]["name"] == 2 and "NER" in r["names_from"]  # " Lyon." trimmed to Lyon: supported
    assert check_support(summary, SOURCE)["names_from"].startswith("capitalised")


def test_capitalised_spans():
    text = "The Rhone Valley port. Lyon said so. Yesterday Jean-Luc Picard's crew left; Anne went home."
    assert [s["text"] for s in capitalised_spans(text)] == ["Rhone Valley", "Jean-Luc Picard's", "Anne"]


def test_possessive_and_case_of_a_source_name_are_supported():
    r = check_support("The council of LYON's port closed.", SOURCE)
    assert r["counts"]["total"] == 0


# ------------------------------------------------------------------------ content words

def test_content_words_by_stem_and_function_words_never():
    summary = "The councils closing the ports created a park for residents."
    r = check_support(summary, SOURCE)
    assert flagged(r, "word") == ["created", "park", "residents"]
    assert r["checked"]["word"] == 6
    assert_offsets(summary, r)
    assert check_support("It was the one that they had.", SOURCE)["counts"]["total"] == 0


def test_the_issue_summary_is_flagged():
    summary = ("The port was expected to be closed for nearly two decades until it became a park with more "
               "than thirty residents.")
    r = check_support(summary, SOURCE)
    assert flagged(r, "number") == ["two", "thirty"]
    assert {"decades", "park", "residents"} <= set(flagged(r, "word"))
    assert r["counts"]["total"] == len(r["unsupported"]) == sum(r["counts"][k] for k in ("number", "name", "word"))
    assert_offsets(summary, r)


def test_empty_and_hostile_text():
    assert check_support("", SOURCE)["counts"]["total"] == 0
    r = check_support("<script>alert(1)</script> \ud800 9" * 3, "")
    assert_offsets("<script>alert(1)</script> \ud800 9" * 3, r)
    assert r["counts"]["number"] == 6  # 1 and 9, three times: the source is empty


# ---------------------------------------------------------------------- cut at the limit

@pytest.mark.parametrize("summary,finish,new,limit,cut", [
    ("The port closes and the", "length", 60, 60, True),
    ("The port closes.", "length", 60, 60, False),
    ("The port closes and the", "eos", 20, 60, False),
    ("The port closes and the", "done", 59, 60, True),  # a seq2seq model's count
    ("The port closes and the", "done", 30, 60, False),
    ("", "length", 60, 60, False),
])
def test_cut_at_limit(summary, finish, new, limit, cut):
    assert cut_at_limit(summary, finish, new, limit) is cut


# --------------------------------------------------------------------------- extractive

def test_mmr_picks_relevant_sentences_and_not_the_same_one_twice():
    a, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    c = np.array([0.6, 0.8, 0.0])
    vectors = np.stack([a, a, b, c, np.array([0.0, 0.0, 1.0])])
    picked, relevance = mmr_pick(vectors, 3, lam=0.5)
    assert len(set(picked)) == 3 and not {0, 1} <= set(picked)  # the duplicate is redundant
    assert picked[0] == int(np.argmax(relevance))
    assert mmr_pick(np.zeros((0, 3)), 3) == ([], pytest.approx(np.zeros(0)))


@pytest.fixture(scope="module")
def encoder():
    return SimpleNamespace(model=tiny_bert(), tokenizer=minilm_tokenizer(), method="embedding-similarity",
                           checkpoint="tiny-embedder", source="test")


def test_extractive_summary_is_sentences_of_the_text(encoder):
    out = extractive_summary(encoder.model, encoder.tokenizer, SOURCE)
    sentences = split_sentences(SOURCE)
    assert len(out["picked"]) == 3 and out["picked"] == sorted(out["picked"])
    assert out["summary"] == " ".join(sentences[i] for i in out["picked"])
    assert len(out["relevance"]) == len(sentences) == out["sentences_in_text"]
    short = extractive_summary(encoder.model, encoder.tokenizer, "One sentence only.")
    assert short["summary"] == "One sentence only." and short["picked"] == [0]


# ------------------------------------------------------------------- on /summarize's result

@pytest.fixture(scope="module")
def tiny_ner():
    labels = ["O", "B-LOC", "I-LOC"]
    m = BertForTokenClassification(tiny_bert().config.__class__(
        **{**tiny_bert().config.to_dict(), "id2label": dict(enumerate(labels)),
           "label2id": {l: i for i, l in enumerate(labels)}}))
    with torch.no_grad():
        m.classifier.bias.zero_()
        m.classifier.bias[1] = 50.0  # every word B-LOC: each word is its own "name"
    return SimpleNamespace(model=m.eval(), tokenizer=minilm_tokenizer(), method="model", checkpoint="tiny-ner",
                           source="test")


def test_run_adds_support_extractive_and_one_rouge_table(encoder, tiny_ner):
    r = {"summary": "Paris housed 3,000 people and", "finish_reason": "length", "output_tokens": 8,
         "notices": [], "baseline": {"summary": " ".join(split_sentences(SOURCE)[:3])}}
    summary_checks.run(r, SOURCE, "The council will close Lyon's port.", {"max_new_tokens": 8},
                       {"ner": tiny_ner, "embedder": encoder}.get)
    s = r["support"]
    assert "NER" in s["names_from"] and s["why"] == summary_checks.WHY
    # the tiny NER model tags every word a place: 'people' and 'and' are in the source, '3,000' is a number
    assert [i["text"] for i in s["unsupported"] if i["kind"] == "name"] == ["Paris", "housed"]
    assert all(i["found_by"] == "ner" for i in s["unsupported"] if i["kind"] == "name")
    assert r["cut_at_limit"] and "8 new tokens in mid-sentence" in r["notices"][0]
    assert [row["summary"] for row in r["rouge_table"]] == list(summary_checks.TABLE_NAMES)
    assert all(0 <= row[k] <= 1 for row in r["rouge_table"] for k in ("rouge1", "rouge2", "rougeL"))
    assert set(r["extractive"]["rouge"]) == {"rouge1", "rouge2", "rougeL"}


def test_run_without_ner_or_encoder_says_so():
    r = {"summary": "Paris closed it.", "finish_reason": "eos", "notices": [], "baseline": {"summary": "x"}}
    summary_checks.run(r, SOURCE, None, {"max_new_tokens": 60}, lambda role: None)
    assert r["support"]["names_from"].startswith("capitalised") and "capitalised spans only" in r["support"]["note"]
    assert r["extractive"] is None and r["rouge_table"] == [] and not r["cut_at_limit"]
    assert any("No extractive summary" in n for n in r["notices"])


def test_every_summary_path_runs_the_checks(monkeypatch, encoder, tiny_ner):
    """The entry point adds the checks to whatever `_instruct_task` returns (instruct here, the
    server, a seq2seq checkpoint, a model-box model): one place after every path."""
    seen = {}

    def fake_task(task, override, settings, progress, run, plan=None):
        seen["task"] = task
        return {"summary": "Mayor Anne Dubois closed 40 ports", "finish_reason": "length", "output_tokens": 5,
                "notices": [], "waited": [], "baseline": {"summary": "The city council of Lyon voted."}}

    monkeypatch.setattr(api, "_instruct_task", fake_task)
    monkeypatch.setattr(api, "_summary_model", lambda role, progress, r: {"ner": tiny_ner, "embedder": encoder}[role])
    r = pipelines.summarize(SOURCE, 5, 0, 0, "The port closes.")
    assert seen["task"] == "summarize" and r["cut_at_limit"]
    assert {"40", "Mayor", "Anne", "Dubois"} <= {i["text"] for i in r["support"]["unsupported"]}
    assert len(r["rouge_table"]) == 3 and r["extractive"]["summary"]


# ------------------------------------------------------------------------------ property

from hypothesis import given, settings, strategies as st  # noqa: E402

_PIECES = st.sampled_from(["Lyon", "port", "3,000", "three thousand", "twenty-one", "Mayor", "Anne", ". ", " ", ", ",
                           "'s", "-", "1851", "1.5 million", "%", "é", "\ufffd", "\n", "The", "one", "and"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join), st.lists(_PIECES, max_size=30).map("".join))
def test_any_text_gives_exact_offsets_and_consistent_counts(summary, source):
    r = check_support(summary, source)
    assert_offsets(summary, r)
    assert r["counts"]["total"] == len(r["unsupported"])
    assert all(r["counts"][k] <= r["checked"][k] for k in ("number", "name", "word"))
    assert check_support(summary, summary)["counts"]["total"] == 0  # a text supports itself


def test_the_tab_marks_each_unsupported_item_escaped_with_its_reason():
    from components.pipelines import summary_view

    summary = "Mayor <b>Anne</b> closed 40 ports & more."
    r = {"summary": summary, "support": check_support(summary, SOURCE)}
    r["support"]["why"] = summary_checks.WHY
    out = summary_view.support_html(r)
    assert "<b>Anne" not in out and "&lt;b&gt;<mark" in out  # the model's text is never markup
    assert '<mark class="tlab-unsupported tlab-unsupported-number" title="not in the text (number): ' in out
    assert ">40</mark>" in out and ">Anne</mark>" in out and ">ports</mark>" not in out
    assert f"{r['support']['counts']['total']} items the text does not support" in out
    assert summary_checks.WHY in out
