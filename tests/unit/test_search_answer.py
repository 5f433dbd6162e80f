"""Ask the corpus's answer: the generated answer checked against the retrieved passages
(backend.search.reader.check_answer, the summaries' support check) and the page's answer block
(components.search.answer): the extractive answer beside the generated one, with its passage and score,
and no note or link the result does not hold."""

from __future__ import annotations

from backend.search.reader import check_answer
from components.search.answer import answer_markdown

PASSAGES = [{"title": "XLM-RoBERTa", "text": "XLM-RoBERTa is a multilingual encoder pretrained on 2.5 TB of "
             "filtered CommonCrawl text in 100 languages, with a SentencePiece vocabulary."},
            {"title": "Repetition penalty", "text": "A repetition penalty divides the logits of tokens that were "
             "already generated, so the model repeats itself less."}]
QUESTION = "How many languages was XLM-RoBERTa pretrained on?"


def _flagged(out: dict, kind: str) -> list[str]:
    return [i["text"] for i in out["unsupported"] if i["kind"] == kind]


def test_numbers_names_and_links_the_passages_lack_are_flagged_but_not_citation_marks():
    answer = "XLM-RoBERTa was pretrained on 50 languages [1], see https://xlmr.example.org for Facebook."
    out = check_answer(answer, QUESTION, PASSAGES)
    assert _flagged(out, "number") == ["50"]  # "[1]" is a citation, not a number
    assert _flagged(out, "link") == ["https://xlmr.example.org"]
    assert "Facebook" in _flagged(out, "name")
    assert "pretrained" not in _flagged(out, "word")  # the passages (and the question) hold it
    for i in out["unsupported"]:
        assert answer[i["start"]:i["end"]] == i["text"]
    assert out["counts"]["total"] == len(out["unsupported"]) and out["counts"]["link"] == 1
    assert check_answer("It was pretrained on 100 languages [1].", QUESTION, PASSAGES)["counts"]["total"] == 0
    made_up = check_answer("XLM-RoBERTa [6] is multilingual [2].", QUESTION, PASSAGES)  # two passages were retrieved
    assert [(i["text"], i["kind"]) for i in made_up["unsupported"]] == [("[6]", "citation")]
    assert "there is no passage 6" in made_up["unsupported"][0]["reason"]


def _result(**kw) -> dict:
    out = {"question": QUESTION, "passages": PASSAGES, "answer": "It was pretrained on 50 languages.",
           "cited": [1], "citations_from": "reader", "reader_method": "instruct-fallback", "notices": [],
           "model": {"checkpoint": "SmolLM2"}}
    out["support"] = check_answer(out["answer"], QUESTION, PASSAGES)
    out.update(kw)
    return out


EXTRACTIVE = {"answer": "100", "passage": 1, "start": PASSAGES[0]["text"].index("100"),
              "end": PASSAGES[0]["text"].index("100") + 3, "margin": 4.25, "no_answer": False, "threshold": 0.5,
              "per_passage": [{"passage": 1, "answer": "100", "margin": 4.25, "no_answer": False}],
              "model": {"checkpoint": "reader-trained-here"}}


def test_the_extractive_answer_is_shown_beside_the_generated_one_with_its_passage_and_score():
    md = answer_markdown(_result(extractive=EXTRACTIVE))
    assert "**Generated answer**" in md and "**Extractive answer**" in md and "**100**" in md
    assert "from \\[1\\] XLM-RoBERTa" in md and "= +4.25 (it answers above +0.50" in md and "> " in md  # its passage, quoted
    assert 'class="tlab-unsupported tlab-unsupported-number"' in md and ">50</mark>" in md
    assert "no extractive QA model" not in md and "offline" not in md
    assert md.count("http") == 0  # no link of our own


def test_a_refusing_reader_and_a_missing_one_say_so_in_the_results_words():
    refused = {**EXTRACTIVE, "answer": "", "passage": None, "no_answer": True,
               "per_passage": [{"passage": 1, "answer": "", "margin": -1.5, "no_answer": True}]}
    md = answer_markdown(_result(extractive=refused))
    assert "**no answer**" in md and "\\[1\\] -1.50" in md and "only above +0.50" in md
    md = answer_markdown(_result(extractive_absent="this app's QA role is served by instruct-fallback"))
    assert "**Extractive answer:** none: this app's QA role is served by instruct-fallback" in md
    plain = answer_markdown(_result(reader_method="model", support=None))
    assert plain.startswith("**Answer** (an extractive QA model") and "Extractive answer" not in plain
