"""How long a fine-tuning run will take, said before it starts: rates measured in this process
(runtime.rates), the plan of steps and validation passes that fit a budget, advice when they do
not, and the estimate checked against what the run took; the run's Budget and its batches of
every epoch (`schedule`). No model runs here."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from backend.runtime.rates import RATES

MAX_LENGTH = 128  # tokens per text while training (the sets' sentences are far shorter)


# Every estimate comes from a rate measured in this process (backend.runtime.rates.RATES), in
# characters of text per second, one rate per kind of work and model. Before the first
# measurement it is a rough guess, and says so.
TRAIN_WORK = "fine-tuning characters"  # optimiser steps, measured over whole chunks (GPU calls included)
SCORE_WORK = "scoring characters"  # forward passes under fine-tuned weights (validation, test)
UNIT_CAP = 4 * MAX_LENGTH  # a text counts up to this many characters: longer ones are truncated
GUESS_PER_S = {"cpu": {TRAIN_WORK: 1500.0, SCORE_WORK: 12000.0},
               "cuda": {TRAIN_WORK: 30000.0, SCORE_WORK: 200000.0}}  # rough guesses, never shown as measured
MEASURED = "measured in this process"
GUESSED = "rough guess: nothing measured yet in this process"


def rate_key(work: str, model: str) -> tuple:
    return (work, model or "")


def text_units(texts) -> int:
    """The work a list of texts costs: their characters, each text up to UNIT_CAP (+1 per text)."""
    return sum(min(len(t), UNIT_CAP) + 1 for t in texts)


def seconds_for(work: str, model: str, units: float, device: str | None = None,
                per_s: float | None = None) -> tuple[float, bool]:
    """(seconds for `units` of `work`, whether the rate was measured) at `per_s` or the measured rate."""
    measured = per_s is not None or RATES.per_s(rate_key(work, model)) is not None
    rate = per_s or RATES.per_s(rate_key(work, model))
    if not rate:
        from backend.runtime.device import pick_device

        guesses = GUESS_PER_S.get(device or pick_device(), GUESS_PER_S["cpu"])
        rate = guesses[work]
    return units / rate, measured


def _steps_that_fit(steps: int, per_epoch: int, step_s: float, eval_s: float, budget_s: float,
                    t0: float = 0.0, k0: int = 0) -> int:
    """Optimiser steps `run` does within `budget_s`: a step starts while time is left (so the last
    one may end after it), and each epoch end adds a validation pass."""
    t = t0
    for k in range(k0 + 1, steps + 1):
        if t >= budget_s:
            return k - 1
        t += step_s
        if k % per_epoch == 0:
            t += eval_s
    return steps


def loop_seconds(p: dict) -> float:
    """Seconds the loop of plan `p` takes: all of it, or (cut by its budget) the budget, the step
    running when it ran out, and the validation pass that scores what it has."""
    if p["fits_budget"]:
        return p["estimated_s"]
    return p["budget_s"] + p["seconds_per_step"] + p["validation_s"]


def plan(train: list, val: list, budget, model: str = "", train_per_s: float | None = None,
         basis: str | None = None, device: str | None = None, spent_s: float = 0.0, spent_steps: int = 0,
         spent_units: int = 0) -> dict:
    """Fine-tuning before it starts: its steps, the seconds of the steps and of each epoch's
    validation pass, whether it fits `budget.max_seconds`, and if not, how many steps fit and
    what to lower. `train` is what it will train on (already capped by max_examples). Re-planned
    during a run, `spent_*` is what its first chunk took (time, steps, units): the rest is
    planned at `train_per_s`."""
    n = len(train)
    per_epoch = max(1, math.ceil(n / budget.batch_size))
    steps = per_epoch * budget.epochs
    units = text_units(t for t, _ in train) * budget.epochs
    rest_s, m_train = seconds_for(TRAIN_WORK, model, max(0, units - spent_units), device, train_per_s)
    train_s = spent_s + rest_s
    eval_s, m_eval = seconds_for(SCORE_WORK, model, text_units(t for t, _ in val), device)
    step_s = rest_s / max(1, steps - spent_steps)
    if basis and not m_eval:
        basis += " (the validation pass: a rough guess, not measured yet)"
    total = train_s + eval_s * budget.epochs
    fits = total <= budget.max_seconds
    measured = m_train and m_eval
    out = {"steps": steps, "steps_per_epoch": per_epoch, "seconds_per_step": round(step_s, 4),
           "train_s": round(train_s, 1), "validation_s": round(eval_s, 2), "validation_passes": budget.epochs,
           "estimated_s": round(total, 1), "budget_s": budget.max_seconds, "fits_budget": fits,
           "steps_that_fit": steps, "advice": None, "measured": measured,
           "basis": basis or (MEASURED if measured else (f"partly {MEASURED}, partly a rough guess"
                                                          if m_train or m_eval else GUESSED)),
           "examples_per_s": round(budget.batch_size / step_s, 1) if step_s else None}
    if not fits:
        out["steps_that_fit"] = _steps_that_fit(steps, per_epoch, step_s, eval_s, budget.max_seconds,
                                                spent_s, spent_steps)
        out["advice"] = advice(out, budget, n)
    return out


REVISE_SHARE = 0.15  # the estimate moved by more than this share since it was last said: say it again


def corrected(train: list, val: list, budget, model: str, units: int, train_s: float, steps: int,
              said_s: float) -> dict | None:
    """The plan again during a run, at the rate of all its steps so far (`units` of text in `train_s` seconds
    of training over `steps` steps), with `corrected_from`: what was said before; None unless it moved by
    more than REVISE_SHARE of that."""
    if train_s <= 0 or units <= 0:
        return None
    now = plan(train, val, budget, model, train_per_s=units / train_s, basis="corrected on this run's steps so far",
               spent_s=train_s, spent_steps=steps, spent_units=units)
    return {**now, "corrected_from": said_s} if abs(now["estimated_s"] - said_s) > REVISE_SHARE * said_s else None


def advice(p: dict, budget, n: int) -> str:
    """What to change so the whole plan fits its budget (fewer epochs, fewer examples, more seconds)."""
    epoch_s = p["steps_per_epoch"] * p["seconds_per_step"] + p["validation_s"]
    ways = []
    epochs_fit = int(budget.max_seconds // epoch_s) if epoch_s > 0 else budget.epochs
    if 1 <= epochs_fit < budget.epochs:
        ways.append(f"epochs to {epochs_fit}")
    per_example = p["seconds_per_step"] / budget.batch_size
    n_fit = int((budget.max_seconds / budget.epochs - p["validation_s"]) / per_example) if per_example > 0 else n
    n_fit = (n_fit // 16) * 16
    if 16 <= n_fit < n:
        ways.append(f"max training examples to {n_fit}")
    need = int(math.ceil(p["estimated_s"] * 1.1 / 5.0) * 5)
    raise_it = f"raise max seconds to {need}"
    text = f"lower {' or '.join(ways)}, or {raise_it}" if ways else raise_it
    return (f"Only {p['steps_that_fit']} of {p['steps']} steps fit in the {budget.max_seconds:.0f} s budget "
            f"(it stops there and keeps the best checkpoint). To finish: {text}.")


def compare(estimated_s: float | None, actual_s: float, tolerance: float = 0.25) -> dict:
    """An estimate against what happened: both, their ratio, and a sentence when they differ by
    more than `tolerance` (25 %) of the estimate."""
    out = {"estimated_s": None if estimated_s is None else round(estimated_s, 1), "actual_s": round(actual_s, 1),
           "ratio": None, "off": False, "message": None}
    if not estimated_s or estimated_s <= 0:
        return out
    ratio = actual_s / estimated_s
    out["ratio"] = round(ratio, 2)
    if abs(ratio - 1.0) > tolerance:
        how = f"{(ratio - 1) * 100:.0f}% longer" if ratio > 1 else f"{(1 - ratio) * 100:.0f}% shorter"
        out["off"] = True
        out["message"] = (f"took {actual_s:.1f} s, estimated {estimated_s:.1f} s before it started ({how} "
                          "than the estimate)")
    return out


@dataclass
class Budget:
    epochs: int = 3
    max_examples: int = 2000
    max_seconds: float = 60.0
    learning_rate: float = 1e-4
    batch_size: int = 16
    seed: int = 0


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    """The order of `n` examples in one epoch, shuffled with a fixed seed (the student's too: distill.py)."""
    order = list(range(n))
    random.Random(seed * 1000 + epoch).shuffle(order)
    return order


def schedule(n: int, budget: Budget) -> list[list[int]]:
    """Batches of example indices for every epoch, shuffled per epoch with a fixed seed."""
    out = []
    for epoch in range(budget.epochs):
        order = epoch_order(n, budget.seed, epoch)
        out += [order[s:s + budget.batch_size] for s in range(0, n, budget.batch_size)]
    return out
