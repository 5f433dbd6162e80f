"""A Train run's comparisons (backend/train/ranking.py, the tab's words) and its estimate while it runs: a method
the time budget cut short is shown as cut and never ranked over complete runs, "most accurate" comes from
stats.claim, and the fine-tuning estimate is corrected when the run's own steps slow down."""

from __future__ import annotations

import numpy as np

from backend.engines.classify import finetune as FT
from backend.train import ranking
from components.train.plots import confusion_figure
from components.train.ui import estimate_line, summary_markdown
from tests.helpers.train_timing import SlowWorker, drain, rows_of_length, clean_rates, clock  # noqa: F401 (fixtures)


def _method(acc: float, n: int, seed: int, **extra) -> dict:
    rng = np.random.default_rng(seed)
    correct = (rng.random(n) < acc).astype(int)
    labels = ["a", "b"]
    return {"accuracy": float(correct.mean()), "macro_f1": 0.5, "n": n, "ci95": [0.0, 1.0], "loss": 0.5,
            "test_correct": correct.tolist(), "confusion": {"labels": labels, "counts": [[1, 0], [0, 1]],
                                                            "normalised": [[0.9, 0.1], [0.2, 0.8]]}, **extra}


def _issue_run() -> dict:
    """The issue's default emotion run: fine-tuning cut by the budget at 10/84 steps (0.421), logistic
    regression 0.83, zero-shot 0.45, on 95 test sentences."""
    return {"zero_shot": _method(0.45, 95, 1, seconds=1.0, template="t"),
            "probe": _method(0.83, 95, 2, fit_s=0.1, features_s=1.0),
            "finetune": _method(0.42, 95, 3, stopped="time budget", steps=10, total_steps=84, seconds=60.0,
                                best_epoch=0.1, best_validation={"accuracy": 0.4})}


def test_a_run_cut_by_the_budget_is_shown_as_cut_and_not_ranked():
    methods = _issue_run()
    r = ranking.rank(methods)
    assert r["cut"] == ["finetune"] and "finetune" not in r["order"]
    assert "cut short by the time budget at 10/84 steps" in r["text"]
    said = confusion_figure(methods, r).layout.meta["notice"]
    assert f"fine-tuning {methods['finetune']['accuracy']:.2f} [cut short]" in said and "cut short by the time budget at 10/84 steps" in said
    assert "cut at 10/84 steps" in confusion_figure(methods, r).layout.annotations[2].text
    md = summary_markdown({"dataset": {"name": "emotion", "labels": ["a", "b"],
                                       "sizes": {"train": 1, "validation": 1, "test": 95}},
                           "methods": methods, "ranking": r})
    assert "(cut short: not ranked against the complete methods)" in md and "Which is most accurate" in md


def test_most_accurate_is_claimed_only_where_the_paired_interval_allows():
    clear = ranking.rank({"probe": _method(0.9, 400, 2), "zero_shot": _method(0.5, 400, 1)})
    assert clear["best"] == "probe" and clear["claim"]["claimed"] and "the most accurate" in clear["text"]
    close = ranking.rank({"probe": _method(0.80, 40, 2), "zero_shot": _method(0.78, 40, 5)})
    assert close["best"] is None and close["text"].startswith("no method is named the most accurate")


class SlowingWorker(SlowWorker):
    """Steps that take 5x longer after the first chunk (a neighbour started work on the box)."""

    def train_chunk(self, state, batches, *args, **kw):
        self.step_s = 0.01 if state is None else 0.05
        return super().train_chunk(state, batches, *args, **kw)


def test_the_estimate_is_corrected_while_the_run_slows(clean_rates, clock):
    budget = FT.Budget(epochs=2, batch_size=2, max_seconds=100)
    events, out = drain(FT.run(rows_of_length(40), rows_of_length(4), 2, budget, SlowingWorker(clock)))
    said = [e for e in events if e["event"] == "estimate"]
    assert said[0]["basis"].startswith("measured on this run's first steps") and len(said) >= 2
    assert said[1]["corrected_from"] == said[0]["estimated_s"] and said[1]["estimated_s"] > 2 * said[0]["estimated_s"]
    assert out.revised and estimate_line(said[1]).startswith(f"corrected from {said[0]['estimated_s']:.1f} s to ")
