"""Ask the corpus's answer: the generated answer checked against the retrieved passages
(backend.search.reader.check_answer, the summaries' support check) and the page's answer block
(components.search.answer): which answer to trust and why (backend.search.trust), the retrieved passages with
their scores, the extractive answer first (highlighted in its passage, with its margin; a refusal names the
closest passage), the generated answer folded away when unsupported, and no note or link the result does not
hold."""

from __future__ import annotations

from backend.search.reader import check_answer
from backend.search.trust import which_to_trust
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
    passages = [{**p, "score": 0.8 - 0.1 * i, "rank": i + 1} for i, p in enumerate(PASSAGES)]
    out = {"question": QUESTION, "passages": passages, "answer": "It was pretrained on 50 languages.",
           "cited": [1], "citations_from": "reader", "reader_method": "instruct-fallback", "notices": [],
           "model": {"checkpoint": "SmolLM2"}}
    out.update(kw)
    out["support"] = check_answer(out["answer"], QUESTION, PASSAGES)
    out["trust"] = which_to_trust(out.get("extractive"), out["answer"], out["support"], passages)
    return out


EXTRACTIVE = {"answer": "100", "passage": 1, "start": PASSAGES[0]["text"].index("100"),
              "end": PASSAGES[0]["text"].index("100") + 3, "margin": 4.25, "no_answer": False, "threshold": 0.5,
              "per_passage": [{"passage": 1, "answer": "100", "margin": 4.25, "no_answer": False},
                              {"passage": 2, "answer": "tokens", "margin": -3.0, "no_answer": True}],
              "closest": {"passage": 1, "answer": "100", "margin": 4.25},
              "model": {"checkpoint": "reader-trained-here"}}
REFUSED = {**EXTRACTIVE, "answer": "", "passage": None, "start": None, "end": None, "margin": None, "no_answer": True,
           "per_passage": [{"passage": 1, "answer": "2.5 TB", "margin": -1.5, "no_answer": True},
                           {"passage": 2, "answer": "logits", "margin": -4.0, "no_answer": True}],
           "closest": {"passage": 1, "answer": "2.5 TB", "margin": -1.5}}


def test_the_page_says_which_to_trust_then_lists_passages_then_the_span_then_the_generated_answer():
    md = answer_markdown(_result(extractive=EXTRACTIVE))
    order = [md.index(s) for s in ("**Which to trust:** Trust the extractive answer", "**Retrieved passages**",
                                   "**Extractive answer**", "Generated answer")]
    assert order == sorted(order)
    assert "- \\[1\\] XLM-RoBERTa: 0.800\n- \\[2\\] Repetition penalty: 0.700" in md
    assert "**100**" in md and "from \\[1\\] XLM-RoBERTa" in md and "= +4.25 (it answers above +0.50" in md
    assert '<mark class="tlab-span">100</mark>' in md  # the span, highlighted in its passage
    # the generated answer says 50: unsupported, so it is folded away, its count in the summary
    assert "<details><summary><b>Generated answer" in md and "not supported, 1 item no passage contains" in md
    assert 'class="tlab-unsupported tlab-unsupported-number"' in md and ">50</mark>" in md
    assert "no extractive QA model" not in md and "offline" not in md
    assert md.count("http") == 0  # no link of our own
    supported = answer_markdown(_result(extractive=EXTRACTIVE, answer="It was pretrained on 100 languages [1]."))
    assert "<details>" not in supported and "**Generated answer (the instruct decoder" in supported
    assert "the generated answer says the same" in supported
    padded = answer_markdown(_result(extractive=EXTRACTIVE, answer="It was pretrained on 100 languages in 1850 [1]."))
    assert "the generated answer says the same" not in padded  # the same span, but beside an unsupported number
    assert "holds the same span, beside what no passage says" in padded


def test_a_refusing_reader_names_the_closest_passage_and_a_missing_one_says_so():
    md = answer_markdown(_result(extractive=REFUSED))
    assert "**no answer**" in md and "\\[1\\] -1.50" in md and "only above +0.50" in md
    assert "Nearest miss: \\[1\\] XLM-RoBERTa came closest" in md and "margin -1.50" in md
    assert "**Which to trust:** Trust neither\\: the passages probably do not answer this" in md
    assert "on every retrieved passage" in md  # it read both
    first = answer_markdown(_result(extractive={**REFUSED, "per_passage": REFUSED["per_passage"][:1], "read": 1}))
    assert "**no answer** on the first 1 of the 2 retrieved passages, the ones it reads" in first and "-4.00" not in first
    md = answer_markdown(_result(extractive_absent="this app's QA role is served by instruct-fallback"))
    assert "**Extractive answer:** none: this app's QA role is served by instruct-fallback" in md
    plain = answer_markdown(_result(reader_method="model", support=None, trust=None))
    assert plain.startswith("**Answer** (an extractive QA model") and "Extractive answer" not in plain


def test_the_trust_line_follows_the_span_and_the_support_check():
    passages = _result()["passages"]
    ok = check_answer("It was pretrained on 100 languages [1].", QUESTION, PASSAGES)
    bad = check_answer("It was pretrained on 50 languages by Google.", QUESTION, PASSAGES)
    span = which_to_trust(EXTRACTIVE, "It was pretrained on 100 languages [1].", ok, passages)
    assert span["trust"] == "extractive" and span["agree"] and span["generated_supported"]
    assert "copied word for word from [1] XLM-RoBERTa" in span["line"] and "margin +4.25 is above its threshold +0.50" in span["line"]
    against = which_to_trust(EXTRACTIVE, "It was pretrained on 50 languages by Google.", bad, passages)
    assert against["trust"] == "extractive" and not against["agree"] and against["generated_supported"] is False
    assert f"has {bad['counts']['total']} items no retrieved passage contains" in against["line"]
    careful = which_to_trust(REFUSED, "It was pretrained on 100 languages [1].", ok, passages)
    assert careful["trust"] == "generated" and "with care" in careful["line"]
    assert "[1] XLM-RoBERTa came closest ('2.5 TB'), margin -1.50, not above its threshold +0.50" in careful["line"]
    neither = which_to_trust(REFUSED, "It was pretrained on 50 languages by Google.", bad, passages)
    assert neither["trust"] == "neither" and "came closest" in neither["line"]
    assert which_to_trust(REFUSED, "", check_answer("", QUESTION, PASSAGES), passages)["trust"] == "neither"
    assert which_to_trust(None, "It was pretrained on 100 languages [1].", ok, passages)["trust"] == "generated"


def test_a_fused_retrieval_is_named_with_its_line_and_each_passage_shows_cosine_and_bm25():
    from backend.search import retrieval

    fused = [{**p, "score": s, "dense": d, "dense_rank": r, "bm25": b, "rank": i + 1}
             for i, (p, s, d, r, b) in enumerate(zip(PASSAGES, (0.95, 0.4), (0.61, 0.72), (2, 1), (7.5, 0.0)))]
    md = answer_markdown(_result(passages=fused, retrieval=retrieval.describe(20)))
    assert "**Retrieval:** fused \\(dense + BM25\\)\\: the index's 20 nearest passages" in md
    assert "0.1 x cosine + 0.9 x BM25" in md and "BM25 is the sparse retriever" in md and "stays dense" in md
    assert "- \\[1\\] XLM-RoBERTa: fused 0.950 (cosine 0.610, dense rank 2; BM25 7.50)" in md
    assert md.index("**Retrieval:**") < md.index("**Retrieved passages** (fused score")
    assert "**Retrieval:**" not in answer_markdown(_result())  # an answer without it (dense) reads as before
