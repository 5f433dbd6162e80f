"""The chapter-7 table in the Search tab (components.search.evaluate.adaptation_markdown): the stored figures
as they were measured, every interval beside its figure, and a "What to notice" line whose claim follows the
difference's interval (above zero, below zero, or across it)."""

from __future__ import annotations

from components.search.evaluate import adaptation_markdown, adaptation_notice


def _s(exact, f1, lo=None, hi=None, n=60):
    lo = exact - 8 if lo is None else lo
    hi = exact + 8 if hi is None else hi
    return {"exact": exact, "exact_ci": [lo, hi], "f1": f1, "f1_ci": [f1 - 7, f1 + 7], "questions": n}


def _table(diff_ci):
    return {"questions": 60, "answerable": 48, "unanswerable": 12, "passages": 276, "test_passages": 30,
            "recall": [{"k": k, "recall": r, "ci": [r - 9, min(100.0, r + 9)], "questions": 48}
                       for k, r in ((1, 62.5), (3, 81.25), (5, 87.5), (10, 93.75))],
            "readers": [{"name": "general", "threshold": 1.2, "on_gold": _s(31.67, 45.2),
                         "end_to_end": [{"k": 1, **_s(25.0, 33.0)}, {"k": 5, **_s(26.67, 35.5)}]},
                        {"name": "adapted", "threshold": -0.4, "on_gold": _s(58.33, 70.1),
                         "end_to_end": [{"k": 1, **_s(45.0, 52.0)}, {"k": 5, **_s(48.33, 56.0)}]}],
            "difference": {"on_gold": {"exact": {"points": 26.67, "ci": diff_ci}, "f1": {"points": 24.9, "ci": [15.0, 35.0]}},
                           "end_to_end": [{"k": 5, "exact": {"points": 21.66, "ci": [-1.35, 40.0]},
                                           "f1": {"points": 20.5, "ci": [2.0, 38.0]}}]},
            "bootstrap": {"resamples": 2000, "seed": 0, "level": 0.95}, "build_s": 61.4, "retriever": "all-MiniLM-L6-v2",
            "adaptation": {"sizes": {"train": 150, "validation": 40}, "threshold_chosen_on": "top 5 retrieved"}, "null_threshold": -0.4}


def test_the_table_shows_the_stored_figures_with_their_intervals():
    md = adaptation_markdown(_table([15.0, 38.33]))
    assert "60 questions (48 answerable, 12 unanswerable) about 30 passages" in md
    assert "| reader on the question's own passage, before | 31.7 [23.7, 39.7] | 45.2 [38.2, 52.2] |" in md
    assert "| reader on the question's own passage, after | 58.3 [50.3, 66.3] | 70.1 [63.1, 77.1] |" in md
    assert "| difference, after - before (points) | +26.7 [15.0, 38.3] | +24.9 [15.0, 35.0] |" in md
    assert "| retriever-reader, top 5 passages, after | 48.3 [40.3, 56.3] | 56.0 [49.0, 63.0] |" in md
    assert "recall@1 62.5% [53.5, 71.5]" in md and "recall@10 93.8%" in md and "on the 48 answerable questions" in md
    assert "trained on 150 questions and chose its threshold (-0.40) on 40" in md and "(in 61 s on the machine" in md
    assert "the best F1 reading the top 5 retrieved passages, as Ask the corpus reads them" in md
    assert "| retriever-reader, top 1 passage, before | 25.0" in md
    assert "2,000 times" in md and "middle 95%" in md


def test_the_notice_claims_a_gain_only_when_the_interval_is_above_zero():
    up = adaptation_notice(_table([15.0, 38.33]))
    assert "raised exact match on the question's own passage from 31.7% to 58.3%" in up and "lies above zero" in up
    assert "among its top 5 for 87.5% of the answerable questions" in up and "EM 26.7% before and 48.3% after (a difference of +21.7 [-1.4, 40.0] points)" in up
    unsure = adaptation_notice(_table([-2.0, 30.0]))
    assert "includes zero" in unsure and "cannot be told from chance" in unsure and "raised" not in unsure
    down = adaptation_notice({**_table([-30.0, -5.0]), "difference": {"on_gold": {"exact": {"points": -17.0, "ci": [-30.0, -5.0]}}}})
    assert "lowered exact match (-17.0 [-30.0, -5.0] points)" in down


def test_an_unbuilt_reader_says_how_to_build_it():
    assert "not built yet" in adaptation_markdown(None) and "make build" in adaptation_markdown(None)


def test_a_table_with_the_lenient_rate_shows_it_and_the_refusals_and_names_the_rule():
    t = _table([15.0, 38.33])
    for reader_row in t["readers"]:
        for s in [reader_row["on_gold"]] + reader_row["end_to_end"]:
            s.update({"lenient": s["exact"] + 20, "lenient_ci": [s["exact"] + 12, s["exact"] + 28],
                      "refused_unanswerable": 9, "unanswerable": 12})
    t["difference"]["on_gold"]["lenient"] = {"points": 20.0, "ci": [10.0, 30.0]}
    t.update({"rank_penalty": 2.0, "read_depth": 3, "adaptation": {**t["adaptation"], "hard_negatives": 150}})
    md = adaptation_markdown(t)
    assert "| right (lenient) % [95% interval] | unanswerable refused |" in md
    assert "| reader on the question's own passage, after | 58.3 [50.3, 66.3] | 70.1 [63.1, 77.1] | 78.3 [70.3, 86.3] | 9 of 12 |" in md
    assert "| difference, after - before (points) | +26.7 [15.0, 38.3] | +24.9 [15.0, 35.0] | +20.0 [10.0, 30.0] | |" in md
    assert "150 retrieved-but-wrong passages" in md and "rank penalty (2 per place)" in md
    assert "how many retrieved passages it reads (the first 3" in md
    assert "rank penalty" not in adaptation_markdown({**t, "read_depth": 1}).split("<small>")[0]  # one passage: no order to weigh
    assert "*Right (lenient)*" in md and "*Rank penalty*" in md


def test_a_table_measured_on_the_fused_retrieval_says_so():
    from backend.search import retrieval

    md = adaptation_markdown({**_table([15.0, 38.33]), "retrieval": retrieval.describe()})
    assert "glossary passages, its first 20 re-ranked with BM25 as Ask retrieves: fused \\(dense + BM25\\)" in md
    assert "re-ranked with BM25" not in adaptation_markdown(_table([15.0, 38.33]))
