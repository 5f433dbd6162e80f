"""Chapter 4's scores with their intervals (backend/multilingual/intervals.py and the tab's words): every score
on screen carries its 95% interval, and "What to notice" says a zero-shot language beats or trails German only
where stats.claim claims it."""

from __future__ import annotations

import numpy as np

from backend.engines.ner import metrics
from backend.multilingual import api
from components.multilingual import plots, ui

LANGS = ["de", "fr", "it", "en"]


def _counts(f1: float, n: int, seed: int) -> list[list[int]]:
    """n sentences of 3 gold entities each, found so that the overall F1 is about `f1` (no spurious ones)."""
    rng = np.random.default_rng(seed)
    tp = rng.binomial(3, f1 / (2 - f1), n)  # F1 = 2tp / (2tp + fn) with fn = 3 - tp
    return [[int(t), 0, int(3 - t)] for t in tp]


def _raw(scores: dict, n: int = 40) -> dict:
    runs = {}
    for k, (run, by) in enumerate(scores.items()):
        langs = list(by)
        counts = {l: _counts(f, n, 10 * k + i) for i, (l, f) in enumerate(by.items())}
        runs[run] = {"meta": {"train_languages": ["de"] if run == "de" else langs, "frozen": "x", "trained": "y",
                              "frozen_params": 1e6, "trained_params": 1e6, "steps": 10, "epochs": 1},
                     "scores": {l: {"f1": float(metrics._prf(sum(c[0] for c in counts[l]), sum(c[0] for c in counts[l]),
                                                             3 * n)["f1"]),
                                    "report": {"per_type": {}}, "errors": {}, "examples": [], "counts": counts[l]}
                                for l in langs}}
    return {"runs": runs, "languages": LANGS, "sizes": {"train": {l: 240 for l in LANGS}, "test": {l: n for l in LANGS}},
            "labels": [], "settings": {"batch_size": 16}, "built_s": 1.0, "base_checkpoint": "e5"}


def test_the_issues_scores_on_forty_sentences_carry_intervals_and_claim_no_transfer_win():
    """German-only: German 0.605, French 0.648, Italian 0.737 on 40 sentences a language: the page said
    neither noise nor difficulty, and a learner read "transfer beats the training language"."""
    r = api.shaped(_raw({"de": {"de": 0.605, "fr": 0.648, "it": 0.737, "en": 0.6},
                         "all": {"de": 0.7, "fr": 0.7, "it": 0.75, "en": 0.7}}))
    for row in ui.table_rows(r):
        assert all("(" in cell and "-" in cell for cell in row[1:]), row  # every score with its interval
    ci = r["evidence"]["ci95"]["de"]["it"]
    assert ci[0] < r["table"][0]["it"] < ci[1]
    said = plots.transfer_notice(r)
    assert "above German" not in said and "no difference is claimed for French, Italian, English" in said
    assert "own 40 test sentences" in said and "not built here" in said
    fig = plots.transfer_bars(r)
    assert all(t.error_y.visible and len(t.error_y.array) == 4 for t in fig.data)


def test_a_difference_the_intervals_allow_is_claimed_with_its_interval():
    r = api.shaped(_raw({"de": {"de": 0.9, "fr": 0.3, "it": 0.88, "en": 0.85}}, n=200))
    said = plots._one_run_notice(r, r["table"][0])
    assert "transfer loses F1" in said and "95% interval" in said
    c = r["evidence"]["unseen"]
    assert c["claimed"] and c["hi"] < 0


def test_sentence_counts_add_up_to_the_reports_overall_line():
    rng = np.random.default_rng(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    gold = [[tags[k] for k in rng.integers(0, 5, 8)] for _ in range(50)]
    pred = [[t if rng.random() < 0.7 else tags[rng.integers(0, 5)] for t in g] for g in gold]
    tp, fp, fn = np.sum(metrics.sentence_counts(gold, pred), axis=0)
    overall = metrics.report(gold, pred)["overall"]
    assert (tp, tp + fp, tp + fn) == (overall["correct"], overall["predicted"], overall["support"])


def test_the_live_run_shows_one_progress_bar():
    """Two progress overlays piled up on the live run (every output showed one): only the summary shows it."""
    import gradio as gr

    from components.shell import lifecycle

    with gr.Blocks() as demo:
        ui.build()
        lifecycle.wire()
    deps = demo.config["dependencies"]
    live = next(d for d in deps if d.get("api_name") == "multilingual_ner_train")
    summary = next(c["id"] for c in demo.config["components"] if c.get("props", {}).get("elem_id") == "ml-summary")
    assert live["show_progress_on"] == [summary]
