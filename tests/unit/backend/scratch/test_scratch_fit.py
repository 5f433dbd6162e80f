"""The tiny GPT's overfitting verdict (backend/scratch/fit.py) and the line the From scratch tab writes from
it: the validation loss rising from 2.337 to 2.405 while the training loss falls is called overfitting."""

from __future__ import annotations

from backend.scratch import fit
from components.scratch.gpt import final_md


def _run(vals, train_from=3.0, train_to=1.8, steps=400):
    losses = [round(train_from + (train_to - train_from) * i / (steps - 1), 4) for i in range(steps)]
    every = steps // (len(vals) - 1)
    return losses, [{"step": i * every, "val_loss": v} for i, v in enumerate(vals)]


def test_a_rising_validation_loss_under_a_falling_training_loss_is_overfitting():
    losses, evals = _run([3.1, 2.6, 2.337, 2.36, 2.405])
    got = fit.overfitting(losses, evals)
    assert got["overfitting"] is True and (got["best_step"], got["best_val"], got["final_val"]) == (200, 2.337, 2.405)
    assert "rose from 2.337 (step 200) to 2.405 (step 400)" in got["why"] and got["train_now"] < got["train_then"]


def test_no_claim_while_it_improves_within_noise_or_on_too_few_passes():
    assert fit.overfitting(*_run([3.1, 2.6, 2.4, 2.3]))["overfitting"] is False
    assert fit.overfitting(*_run([3.1, 2.6, 2.337, 2.345]))["overfitting"] is False  # +0.3%: within 1%
    assert fit.overfitting(*_run([3.1, 2.6, 2.4, 2.5], train_from=1.8, train_to=2.0))["overfitting"] is False
    few = fit.overfitting(*_run([3.1, 2.9]))
    assert few["overfitting"] is None and "fewer than 3" in few["why"]


def test_the_tab_says_overfitting_when_the_run_shows_it():
    losses, evals = _run([3.1, 2.6, 2.337, 2.36, 2.405])
    r = {"final": {"train_loss": 1.8, "val_loss": 2.405, "val_step": 400}, "steps_run": 400, "steps": 400,
         "stopped": None, "seconds": 60.0, "train_seconds": 55.0, "tokens_per_s": 1000.0, "parameters": 100_000,
         "vocab_size": 256, "tokens": "bytes", "unigram_entropy": 4.5, "plan": {"seconds": 60, "basis": "measured"},
         "fit": fit.overfitting(losses, evals)}
    said = final_md(r)
    assert "**Overfitting:** validation loss rose from 2.337" in said and "to 2.405" in said
    assert "learning its training text by heart" in said
    assert "Overfitting" not in final_md({**r, "fit": fit.overfitting(*_run([3.1, 2.6, 2.4, 2.3]))})
