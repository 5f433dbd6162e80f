"""The Train tab tells the truth: estimates come from rates measured in this process and cover the
whole run, the fine-tuning plan says before it starts whether it fits its budget (and what to
lower), the result compares estimate and actual, and small test splits carry a count and a 95%
Wilson interval."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.engines.classify import metrics as M
from backend.engines.classify import finetune as FT
from backend.runtime.rates import RATES
from backend.train import api
from components.train.ui import accuracy_text, done_line, estimate_line, show_estimate, summary_markdown
from components.train.plots import confusion_figure, curve_figure
from tests.helpers.train_data import csv_file, toy_rows, tiny, tiny_dir  # noqa: F401 (fixtures)
from tests.helpers.train_timing import drain, rows_of_length, clean_rates, clock, MODEL, SlowWorker  # noqa: F401 (fixtures)


# ----------------------------------------------------------------------------- Wilson interval
def test_wilson_interval_known_values():
    lo, hi = M.wilson_interval(4, 4)
    assert (round(lo, 2), round(hi, 2)) == (0.51, 1.00)
    assert M.wilson_interval(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert M.wilson_interval(0, 4) == pytest.approx((0.0, 0.4899), abs=1e-4)
    assert M.wilson_interval(0, 0) == (0.0, 1.0)


def test_report_carries_count_and_interval():
    r = M.report([0, 1, 1, 0], np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]]), ["a", "b"])
    assert r["n"] == 4 and r["correct"] == 4 and r["small_sample"] is True
    assert r["ci95"] == [0.5101, 1.0]
    big = M.report([0] * 40, np.tile([0.9, 0.1], (40, 1)), ["a", "b"])
    assert big["small_sample"] is False and big["ci95"][1] == 1.0


def test_small_accuracies_are_shown_with_count_and_interval():
    assert accuracy_text(1.0, 4, [0.5101, 1.0]) == "1.000 (n=4, 95% CI 0.51-1.00)"
    assert accuracy_text(0.8, 100, [0.71, 0.87]) == "0.800 (95% CI 0.71-0.87)"  # 30 or more: no count
    methods = {"probe": {"accuracy": 1.0, "n": 4, "ci95": [0.5101, 1.0],
                         "confusion": {"labels": ["a", "b"], "normalised": [[1, 0], [0, 1]]}}}
    assert "acc 1.00<br>(n=4, 95% CI 0.51-1.00)" in confusion_figure(methods).layout.annotations[0].text
    curve = {"sizes": ["all"], "examples": [8], "probe": [1.0], "test_n": 4}
    assert "only 4 test examples" in curve_figure(curve).layout.title.text


def test_plan_counts_steps_and_each_validation_pass_at_measured_rates(clean_rates):
    per_text = FT.text_units(["x" * 20])
    RATES.add(FT.rate_key(FT.TRAIN_WORK, MODEL), per_text * 10, 1.0)  # 10 examples a second
    RATES.add(FT.rate_key(FT.SCORE_WORK, MODEL), per_text * 100, 1.0)  # 100 examples a second
    b = FT.Budget(epochs=3, batch_size=16, max_seconds=60)
    p = FT.plan(rows_of_length(64), rows_of_length(50), b, MODEL)
    assert p["steps"] == 12 and p["steps_per_epoch"] == 4 and p["measured"] is True
    assert p["basis"] == FT.MEASURED
    assert p["train_s"] == pytest.approx(64 * 3 / 10, abs=0.05)  # 19.2 s of steps
    assert p["validation_s"] == pytest.approx(0.5, abs=0.01) and p["validation_passes"] == 3
    assert p["estimated_s"] == pytest.approx(19.2 + 1.5, abs=0.1)  # the steps AND every validation pass
    assert p["fits_budget"] is True and p["advice"] is None and p["steps_that_fit"] == 12


def test_a_plan_over_budget_says_how_many_steps_fit_and_what_to_lower(clean_rates):
    per_text = FT.text_units(["x" * 20])
    RATES.add(FT.rate_key(FT.TRAIN_WORK, MODEL), per_text * 10, 1.0)
    RATES.add(FT.rate_key(FT.SCORE_WORK, MODEL), per_text * 10, 1.0)
    b = FT.Budget(epochs=3, batch_size=16, max_seconds=30)
    p = FT.plan(rows_of_length(160), rows_of_length(40), b, MODEL)  # 30 steps of 1.6 s + 3 passes of 4 s = 60 s
    assert p["estimated_s"] == pytest.approx(60.0, abs=0.2) and p["fits_budget"] is False
    # epoch 1 = 10 steps of 1.6 s + a 4 s pass = 20 s; steps start at 20, 21.6 ... 29.6 s: 7 more
    assert p["steps_that_fit"] == 17
    assert FT.loop_seconds(p) == pytest.approx(30 + 1.6 + 4, abs=0.1)  # the last step and the pass after the cut
    assert p["advice"].startswith("Only 17 of 30 steps fit in the 30 s budget")
    assert "epochs to 1" in p["advice"] and "raise max seconds to 70" in p["advice"]
    n_fit = int(p["advice"].split("max training examples to ")[1].split(" ")[0].rstrip(","))
    # Each way out the advice names really fits when planned again.
    assert FT.plan(rows_of_length(160), rows_of_length(40), FT.Budget(epochs=1, batch_size=16, max_seconds=30), MODEL)["fits_budget"]
    assert FT.plan(rows_of_length(n_fit), rows_of_length(40), b, MODEL)["fits_budget"]
    assert FT.plan(rows_of_length(160), rows_of_length(40), FT.Budget(epochs=3, batch_size=16, max_seconds=70), MODEL)["fits_budget"]
    line = estimate_line(p)
    assert "**over** the 30 s budget" in line and "Only 17 of 30 steps fit" in line


def test_nothing_measured_is_called_a_rough_guess(clean_rates):
    p = FT.plan(rows_of_length(64), rows_of_length(10), FT.Budget(), MODEL)
    assert p["measured"] is False and p["basis"] == FT.GUESSED and "rough guess" in p["basis"]
    assert "rough guess" in estimate_line(p)


def test_comparison_says_both_numbers_when_off_by_more_than_a_quarter():
    off = FT.compare(44.0, 72.0)
    assert off["off"] is True and off["ratio"] == pytest.approx(1.64, abs=0.01)
    assert "took 72.0 s" in off["message"] and "estimated 44.0 s" in off["message"] and "64% longer" in off["message"]
    assert FT.compare(44.0, 30.0)["message"].endswith("(32% shorter than the estimate)")
    near = FT.compare(44.0, 52.0)  # 18 % over: within the tolerance, no warning
    assert near["off"] is False and near["message"] is None and near["actual_s"] == 52.0
    result = {"seconds": 72.0, "estimate": {**off, "message": "This run " + off["message"]}}
    assert "**Estimate off:**" in done_line(result) and "44.0 s" in done_line(result)
    assert done_line({"seconds": 52.0, "estimate": near}) == \
        "Done: model time 52.00 s (estimated 44 s before it started)."
    assert done_line({"seconds": 0.5, "estimate": FT.compare(0.42, 0.5)}) == \
        "Done: model time 0.50 s (estimated 0.4 s before it started)."


def test_the_loop_replans_after_its_first_chunk_and_measures_the_rates(clean_rates, clock):
    budget = FT.Budget(epochs=4, batch_size=2, max_seconds=0.6)
    events, out = drain(FT.run(rows_of_length(20), rows_of_length(4), 2, budget, SlowWorker(clock, step_s=0.03)))
    est = events[0]
    assert est["event"] == "estimate" and est["basis"].startswith("measured on this run's first steps")
    assert est["steps"] == 40 and est["fits_budget"] is False  # 40 x 0.03 s > 0.6 s, said before the rest ran
    assert est["advice"].startswith(f"Only {est['steps_that_fit']} of 40 steps fit")
    assert out.stopped == "time budget" and out.steps < 40
    # On the virtual clock the plan's count is the loop's, to a step (a float edge at the deadline).
    assert est["steps_that_fit"] == 20 and abs(out.steps - 20) <= 1, (out.steps, est)
    assert out.train_s > 0 and out.eval_s > 0 and out.epochs[0]["val_n"] == 4
    assert RATES.per_s(FT.rate_key(FT.TRAIN_WORK, MODEL)) and RATES.per_s(FT.rate_key(FT.SCORE_WORK, MODEL))


# ----------------------------------------------------------------------------- the whole run (tiny model)
def test_the_estimate_covers_the_whole_run_and_the_result_compares(tiny, tmp_path, clean_rates):
    path = csv_file(tmp_path, toy_rows())
    kw = dict(methods="zero_shot,probe,finetune", epochs=2, max_seconds=60, batch_size=4)
    before = api.estimate("upload", path, **kw)
    assert {p["part"] for p in before["parts"]} >= {"features", "zero_shot", "probe", "finetune", "scoring", "curve"}
    assert before["measured"] is False and "rough guess" in before["basis"]
    assert before["seconds"] == pytest.approx(sum(p["estimated_s"] for p in before["parts"]), abs=0.1)
    ft = before["finetune"]
    assert ft["validation_passes"] == 2 and ft["steps"] == 2 * 3  # 12 train rows / 4 per batch x 2 epochs
    r = api.train("truth", "upload", path, learning_rate=1e-3, **kw)
    est = r["estimate"]
    assert est["estimated_s"] == pytest.approx(before["seconds"], abs=0.2)  # the plan the tab showed
    assert est["actual_s"] == pytest.approx(r["seconds"], abs=0.1)
    assert {p["part"] for p in est["parts"]} == {p["part"] for p in before["parts"]}
    assert all(p["actual_s"] >= 0 for p in est["parts"])
    assert (est["message"] is not None) == est["off"] == (abs(est["actual_s"] / est["estimated_s"] - 1) > 0.25)
    assert r["methods"]["finetune"]["vs_plan"]["estimated_s"] is not None
    json.dumps(r)
    after = api.estimate("upload", path, **kw)  # every part has now run: all measured here
    assert after["measured"] is True and after["basis"] == FT.MEASURED
    # A tiny upload: every accuracy is on 4 test examples, with its count and interval.
    for m in r["methods"].values():
        assert m["n"] == 2 and len(m["ci95"]) == 2 and m["ci95"][0] <= m["accuracy"] <= m["ci95"][1]
    md = summary_markdown(r)
    assert md.count("(n=2, 95% CI") == 3, md
    text = show_estimate("upload", path, "", "", 2, 2000, 60, ["zero_shot", "probe", "finetune"], 4, True, False, 0)
    assert "The whole run: about" in text and FT.MEASURED in text and "Fine-tuning 12 examples x 2 epochs" in text
    p = api.predict_trained("truth", "good lovely fun")
    assert p["model"]["test_n"] == 2 and p["model"]["test_ci95"]
