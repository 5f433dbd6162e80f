"""The lines a learner reads are true for the mode and data on screen.

Each test builds the line from data shaped like the backend's result (the backend's own numbers
are tested in test_figure_facts.py) and checks what the issue quoted is gone.
"""

from __future__ import annotations

import re

import pytest

from backend.pipelines.metrics import bleu
from backend.scratch import MAX_CHARS
from components.anatomy import plots as anatomy_plots
from components.pipelines import plots as P
from components.search import plots as search_plots
from components.shell import course
from components.shell.figures import notice_of
from components.tokenizers import ui as tokenizers_ui


def test_multi_label_zero_shot_names_no_winner():
    results = [{"sequence": "The screen cracked", "labels": ["hardware defect", "refund", "praise"],
                "scores": [0.66, 0.58, 0.02]}]
    multi = P.label_notice(results, multi_label=True)
    assert "wins" not in multi and "2 of 3 score above 0.5" in multi and "on its own" in multi
    assert "wins with 0.66" in P.label_notice(results)  # single-label: the scores sum to 1, one wins
    assert "wins" not in notice_of(P.label_bars(results, "t", multi_label=True))


@pytest.mark.parametrize("x,shown", [(0.996, "99.6%"), (0.9996, ">99.9%"), (1.0, "100%"), (0.5, "50%"),
                                     (0.004, "<1%"), (0.0, "0%")])
def test_percent_never_rounds_a_part_to_the_whole(x, shown):
    assert P.percent(x) == shown


def test_fill_mask_top_five_do_not_hold_100_percent():
    cands = [{"token_str": w, "score": s, "sequence": w} for w, s in
             [("paris", 0.9), ("lyon", 0.05), ("nice", 0.03), ("rome", 0.01), ("oslo", 0.006)]]
    said = notice_of(P.mask_bars({"candidates": cands}))
    assert "together hold 99.6%" in said and "100%" not in said


def test_bleu_line_shows_matches_not_smoothing():
    r = {"language_pair": "en-de", "bleu": bleu("Der Bürgermeister eröffnete die Brücke", "Am Sonntag fuhr die Fähre ab")}
    line = P.bleu_line(r)
    assert "1-grams 1/5" in line and "2-grams 0/4" in line
    assert "smoothing" in line and "not a match" in line
    assert "n-gram precisions" not in line


def _index_rows(flat_ms, hnsw_ms, ivf_ms, recall=(1.0, 1.0, 1.0)):
    return [{"label": "Flat", "index_type": "Flat (exact)", "query_ms_median": flat_ms, "recall_at_k": recall[0],
             "recall_k": 10, "memory_mb": 0.1, "build_s": 0.001},
            {"label": "HNSW", "index_type": "HNSW", "query_ms_median": hnsw_ms, "recall_at_k": recall[1],
             "recall_k": 10, "memory_mb": 0.2, "build_s": 0.01},
            {"label": "IVF", "index_type": "IVF-Flat", "query_ms_median": ivf_ms, "recall_at_k": recall[2],
             "recall_k": 10, "memory_mb": 0.1, "build_s": 0.01}]


def test_index_comparison_says_what_is_true_for_a_small_corpus():
    said = notice_of(search_plots.tradeoff_figure(_index_rows(0.02, 0.05, 0.04)))
    assert "trade recall for speed" not in said
    assert "no approximate index beats the exact one" in said
    big = notice_of(search_plots.tradeoff_figure(_index_rows(13.0, 0.08, 0.07, (1.0, 0.98, 0.97))))
    assert "trade recall for speed" in big


def test_logit_lens_with_tied_embeddings_does_not_conclude_about_confidence():
    lens = {"tokens": ["The", " cat"], "positions": [0, 1], "layers": [0, 1, 2],
            "top1": [["The", " cat"], ["x", "y"], [" sat", " on"]],
            "top1_prob": [[1.0, 1.0], [0.2, 0.3], [0.4, 0.5]], "top5": [[[["a", 0.1]]] * 2] * 3,
            "tied_embeddings": True, "embedding_echoes_input": 1.0}
    said = notice_of(anatomy_plots.logit_lens(lens, "t"))
    assert "do not make the model more confident" not in said
    assert "input token itself" in said and "tied" in said


def test_tokenizer_notice_says_when_text_became_unk():
    def result(unknown):
        tokens = [{"token": "un", "text": "un", "special": False, "continuation": False, "start": 0, "end": 2},
                  {"token": "##believable", "text": "believable", "special": False, "continuation": True,
                   "start": 2, "end": 12}]
        return {"results": {"encoder": {"count": 4, "tokens": tokens, "unknown": unknown, "unknown_token": "[UNK]"},
                            "decoder": {"count": 5, "tokens": []}}}
    lost = tokenizers_ui.notice(result([{"index": 3, "text": "🤯"}])).replace("\\", "")  # Markdown escapes
    assert "never dropped" not in lost and "[UNK]" in lost and "🤯" in lost
    assert "never dropped" in tokenizers_ui.notice(result([]))


def test_start_chapter_10_and_the_header_name_what_from_scratch_trains():
    import app

    ch10 = next(c for c in course.CHAPTERS if c.number == 10)
    assert "no tab yet" not in (ch10.gap or "") and "GPT" in ch10.gap
    assert re.search(r"tokenizer, a tiny GPT and a tiny encoder-decoder", app.tagline())


def test_the_scratch_paste_box_states_the_limit_that_is_enforced():
    import inspect

    from components.scratch import ui as scratch_ui

    src = inspect.getsource(scratch_ui)
    assert "2,000,000" not in src and "1,000,000" not in src  # the number comes from the check itself
    assert "max_length=MAX_CHARS" in src and MAX_CHARS == 2_000_000


def test_the_model_view_is_tall_enough_for_every_layer():
    import numpy as np

    from backend.attention import views

    for layers in (6, 30):
        html = views.tab_views(np.full((layers, 2, 3, 3), 1 / 3), ["a", "b", "c"], None, "m", 64)[1]
        height = int(re.search(r"height:(\d+)px", html).group(1))
        assert height >= 100 * layers + 200, (layers, height)  # ~100 px a row of thumbnails, plus the header


def test_ner_training_writes_the_train_tabs_link_and_the_pickers_follow_the_model():
    """The Train tab promises a link after a run: NER training writes it into the NER column's bar
    (the classifier's bar is hidden then); Interventions re-reads the model's shape on a change."""
    import app
    from components.shell import links

    demo = app.build_app()
    names = {p.name for p in links.registered()["train"].params}
    assert {"task", "ner_source", "ner_epochs", "ner_seed"} <= names
    config = demo.get_config_file()
    ids = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
    fns = {i: d for i, d in enumerate(config["dependencies"])}
    writes_ner_bar = [d for d in fns.values() if "train-ner-link" in [ids.get(o) for o in d["outputs"]]]
    assert writes_ner_bar, "nothing writes the NER link bar"
    ner_train = [i for i, d in fns.items() if d.get("api_name") == "train_ner"]
    assert ner_train and any(d.get("trigger_after") in ner_train for d in writes_ner_bar)


def test_the_decoders_fill_mask_share_is_of_its_reranked_candidates_not_the_vocabulary():
    cands = [{"token_str": w, "score": s, "left_prob": lp, "sequence": w} for w, s, lp in
             [("paris", 0.95, 0.20), ("lyon", 0.03, 0.05), ("nice", 0.01, 0.02), ("rome", 0.004, 0.01),
              ("oslo", 0.003, 0.004)]]
    said = notice_of(P.mask_bars({"candidates": cands, "n_reranked": 20}))
    assert "the top 5 together hold 99.7% of the rerank's probability" in said
    assert "shared among the 20 candidates reranked, not the whole vocabulary" in said
    assert "these 5 words hold 28% of the vocabulary's" in said
