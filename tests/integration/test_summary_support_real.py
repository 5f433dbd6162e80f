"""Integration: chapter 6's summary checks on the `local` profile's real models.

A short news text written for this check (the issue's case: a river port built in 1851, housing
for about 3,000 people); the instruct model (SmolLM2-135M, greedy, deterministic on CPU fp32)
writes a summary that adds what the text does not say, and the check flags it: names by the NER
model trained here, words by their Snowball stems. The extractive summary is the packaged
encoder's pick of whole sentences, and the ROUGE table scores all three summaries.
"""

import os

import pytest

from backend.pipelines.metrics import split_sentences
from backend.engines.tasks.support import numbers
from tests.helpers.summary_texts import NEWS, REFERENCE

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def result():
    old = os.environ.get("TLAB_PROFILE")
    os.environ["TLAB_PROFILE"] = "local"
    from backend import pipelines

    yield pipelines.summarize(NEWS, 60, 10, 0, REFERENCE)
    if old is None:
        os.environ.pop("TLAB_PROFILE", None)
    else:
        os.environ["TLAB_PROFILE"] = old


def test_the_added_facts_are_flagged_with_exact_offsets(result):
    summary, s = result["summary"], result["support"]
    assert result["method"] == "instruct-fallback" and summary
    assert s["names_from"].startswith("the NER model")  # the model trained here ran on the summary
    assert s["counts"]["total"] >= 1 and s["counts"]["total"] == len(s["unsupported"])
    for item in s["unsupported"]:
        assert summary[item["start"]:item["end"]] == item["text"]
        assert item["text"].lower() not in NEWS.lower() or item["kind"] == "word"
    source_values = {n["value"] for n in numbers(NEWS)}
    for n in numbers(summary):  # a number of the text is never flagged, one the text lacks always is
        flagged = any(i["start"] == n["start"] for i in s["unsupported"])
        assert flagged == (n["value"] not in source_values), n


def test_cut_summary_says_so(result):
    assert result["cut_at_limit"] == (result["finish_reason"] == "length"
                                      and not result["summary"].rstrip().endswith((".", "!", "?")))
    if result["cut_at_limit"]:
        assert "in mid-sentence" in result["notices"][0]


def test_extractive_and_the_rouge_table(result):
    ext = result["extractive"]
    sentences = split_sentences(NEWS)
    assert len(ext["picked"]) == 3 and ext["summary"] == " ".join(sentences[i] for i in ext["picked"])
    assert ext["picked"] != [0, 1, 2] or ext["summary"] == result["baseline"]["summary"]
    rows = {row["summary"]: row for row in result["rouge_table"]}
    assert set(rows) == {"model summary", "lead-3", "extractive (MMR)"}
    assert rows["lead-3"]["rouge1"] == pytest.approx(result["baseline"]["rouge"]["rouge1"]["f1"], abs=1e-4)
    assert rows["model summary"]["rouge1"] == pytest.approx(result["rouge"]["rouge1"]["f1"], abs=1e-4)
