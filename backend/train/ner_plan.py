"""The plan of an NER run, said before it starts: the steps the learner chose (epochs x batches),
their seconds at the rate measured in this process (or a rough guess that says so), a validation
pass per epoch, the final scoring, and whether all of it fits the request's time budget; after
the run, the plan checked against what it took. No model runs here."""

from __future__ import annotations

import math

from backend import hub
from backend.engines.classify import finetune_plan
from backend.engines.ner.token_classification import Recipe
from backend.runtime import budget as request_budget
from backend.runtime.device import pick_device
from backend.runtime.rates import RATES
from backend.train.gpu import ROLE

TRAIN_WORK = "NER training words"  # words through forward + backward + update
SCORE_WORK = "NER scoring words"  # words through a forward pass (validation, test)
LOAD_WORK = "loading the embedder"  # the classifier plan's key: one load is one load
GUESS_PER_S = {"cpu": {TRAIN_WORK: 230.0, SCORE_WORK: 500.0, LOAD_WORK: 1 / 15.0},  # 2 contended cores, measured
               "cuda": {TRAIN_WORK: 20000.0, SCORE_WORK: 100000.0, LOAD_WORK: 1 / 10.0}}
PART_NAMES = {"load": "loading the model", "train": "training steps",
              "validation": "a validation pass per epoch (keeps the best epoch)",
              "scoring": "scoring the best epoch (validation + test)"}


def key(work: str, override: str | None) -> tuple:
    return finetune_plan.rate_key(work, override or "")


def words(sentences) -> int:
    return sum(len(s.tokens) for s in sentences)


def seconds(work: str, units: float, override: str | None) -> tuple[float, bool]:
    """(seconds, measured?) for `units` of `work` at this process's rate, else a rough guess."""
    per_s = RATES.per_s(key(work, override))
    if per_s:
        return units / per_s, True
    return units / GUESS_PER_S.get(pick_device(), GUESS_PER_S["cpu"])[work], False


def limit_s() -> float:
    """Seconds this request may still run: what is left of its budget, or the server's budget."""
    b = request_budget.current()
    if b is not None:
        return b.remaining()
    s = request_budget.default_seconds()
    return s if s > 0 else math.inf


def plan(train, validation, test, recipe: Recipe, override: str | None = None) -> dict:
    """Every part of the run with its seconds, the total, and whether it fits the budget (if not:
    how many epochs would, and what to lower)."""
    try:
        loaded = hub.get_hub().is_loaded(ROLE, override)
    except Exception:  # a bad override fails the run itself, with its message
        loaded = True
    per_epoch = math.ceil(len(train) / recipe.batch_size)
    steps = recipe.steps(len(train))
    parts = []

    def add(part: str, work: str, units: float) -> None:
        s, measured = seconds(work, units, override)
        parts.append({"part": part, "what": PART_NAMES[part], "estimated_s": round(s, 2), "measured": measured})

    if not loaded:
        add("load", LOAD_WORK, 1)
    add("train", TRAIN_WORK, words(train) * recipe.epochs)
    add("validation", SCORE_WORK, words(validation) * recipe.epochs)
    add("scoring", SCORE_WORK, words(validation) + words(test))
    total = sum(p["estimated_s"] for p in parts)
    measured = all(p["measured"] for p in parts)
    guessed = [p["what"] for p in parts if not p["measured"]]
    basis = (finetune_plan.MEASURED if measured else
             f"rough guess for {', '.join(guessed)}: not measured yet in this process")
    budget_s = limit_s()
    out = {"steps": steps, "steps_per_epoch": per_epoch, "epochs": recipe.epochs, "batch_size": recipe.batch_size,
           "train_sentences": len(train), "seconds": round(total, 1), "seconds_per_step": round(
               next(q for q in parts if q["part"] == "train")["estimated_s"] / max(1, steps), 3), "parts": parts, "measured": measured, "basis": basis,
           "budget_s": None if math.isinf(budget_s) else round(budget_s, 1), "fits_budget": total <= budget_s,
           "advice": None}
    if not out["fits_budget"]:
        out["advice"] = _advice(out, parts, recipe, budget_s)
    return out


def _advice(out: dict, parts: list[dict], recipe: Recipe, budget_s: float) -> str:
    fixed = sum(p["estimated_s"] for p in parts if p["part"] in ("load", "scoring"))
    per_epoch = sum(p["estimated_s"] for p in parts if p["part"] in ("train", "validation")) / recipe.epochs
    fit = int((budget_s - fixed) // per_epoch) if per_epoch > 0 else recipe.epochs
    ways = [f"lower epochs to {fit}"] if 1 <= fit < recipe.epochs else []
    share = (budget_s - fixed) / (per_epoch * recipe.epochs) if per_epoch > 0 else 1
    n_fit = int(out["train_sentences"] * share * 0.9)
    if 16 <= n_fit < out["train_sentences"]:
        ways.append(f"train on at most {n_fit} sentences (max_sentences)")
    ways.append("run the app yourself with a larger TLAB_TIME_BUDGET_S")
    return (f"The plan ({out['steps']} steps) needs about {out['seconds']:.0f} s ({out['basis']}), but this "
            f"request has {budget_s:.0f} s. To fit: {'; or '.join(ways)}.")


def record(train_words: int, train_s: float, score_words: int, score_s: float, override: str | None) -> None:
    """The rates this run measured, for the next plan."""
    RATES.add(key(TRAIN_WORK, override), train_words, train_s)
    RATES.add(key(SCORE_WORK, override), score_words, score_s)


def compare(p: dict, actual: dict, total_s: float) -> dict:
    """The plan shown before the run against what each part took."""
    out = finetune_plan.compare(p["seconds"], total_s)
    out["basis"] = p["basis"]
    out["parts"] = [{**q, "actual_s": round(actual.get(q["part"], 0.0), 2)} for q in p["parts"]]
    return out
