"""The plan of a Train run, said before it starts: every part (loading, features, zero-shot, the
probe, the fine-tune's steps and validation passes, scoring, the learning curve) at the rate
measured in this process, or a rough guess that says so; and, after the run, the plan checked
against what each part took."""

from __future__ import annotations

from backend import hub
from backend.engines.classify import datasets
from backend.runtime.device import pick_device
from backend.runtime.rates import RATES
from backend.train import features
from backend.train import gpu
from backend.engines.classify import finetune

CURVE_SIZES = (8, 16, 32, 64, 128)  # examples per label on the learning curve, then all


def _curve_sizes(ds: datasets.Dataset) -> tuple[list[int | None], list[str]]:
    counts = ds.counts()["train"].values()
    most = max(counts)
    sizes: list[int | None] = [n for n in CURVE_SIZES if n < most]
    notes = [f"{n} per label: the train split has at most {most} per label, so it is the 'all' point."
             for n in CURVE_SIZES if n >= most]
    return sizes + [None], notes


LOAD_WORK = "loading the embedder"  # units: 1 load
PROBE_WORK = "logistic-regression examples"  # units: examples fitted
GUESS_PER_S = {"cpu": {LOAD_WORK: 1 / 10.0, features.EMBED_WORK: 15000.0, features.ZERO_SHOT_WORK: 15000.0,
                       PROBE_WORK: 2000.0},
               "cuda": {LOAD_WORK: 1 / 10.0, features.EMBED_WORK: 300000.0, features.ZERO_SHOT_WORK: 300000.0,
                        PROBE_WORK: 2000.0}}  # rough guesses before the first measurement, never shown as measured
PART_NAMES = {"load": "loading the model", "features": "feature extraction", "zero_shot": "zero-shot baseline",
              "probe": "logistic regression", "finetune": "fine-tuning (steps + a validation pass per epoch)",
              "scoring": "scoring the fine-tuned model (test + validation)", "curve": "learning curve"}


def _seconds(work: str, model: str, units: float) -> tuple[float, bool]:
    """(seconds, measured?) for `units` of `work`: at the rate measured in this process, else a guess."""
    per_s = RATES.per_s(finetune.rate_key(work, model))
    if per_s:
        return units / per_s, True
    guesses = GUESS_PER_S.get(pick_device(), GUESS_PER_S["cpu"])
    return units / guesses[work], False


def _plan_run(ds: datasets.Dataset, chosen: list[str], budget: finetune.Budget, learning_curve: bool,
              curve_finetune: bool, override: str | None) -> dict:
    """Every part the run will do, each with its seconds from a measured rate (or a rough guess, said
    so): loading, features, zero-shot, the probe, fine-tuning with its validation passes, scoring,
    the learning curve. No model runs."""
    model = override or ""
    parts = []

    def add(part, work, units):
        s, measured = _seconds(work, model, units)
        parts.append({"part": part, "what": PART_NAMES[part], "estimated_s": round(s, 2), "measured": measured})

    try:
        loaded = hub.get_hub().is_loaded(gpu.ROLE, override)
        checkpoint = hub.resolve(gpu.ROLE, override).checkpoint
    except Exception:  # a bad override fails the run itself, with its message; not the estimate
        loaded, checkpoint = True, None
    if not loaded:
        add("load", LOAD_WORK, 1)
    texts = [t for t, _ in ds.train + ds.validation + ds.test]
    todo = features.uncached(texts, checkpoint) if ds.source == "shipped" else texts
    add("features", features.EMBED_WORK, finetune.text_units(todo))
    test_units = finetune.text_units(t for t, _ in ds.test)
    if "zero_shot" in chosen:
        add("zero_shot", features.ZERO_SHOT_WORK, test_units)
    if "probe" in chosen:
        add("probe", PROBE_WORK, len(ds.train))
    ft_plan = None
    if "finetune" in chosen:
        ft_train = datasets.cap_examples(ds.train, budget.max_examples, budget.seed)
        ft_plan = finetune.plan(ft_train, ds.validation, budget, model)
        loop_s = finetune.loop_seconds(ft_plan)
        parts.append({"part": "finetune", "what": PART_NAMES["finetune"], "estimated_s": round(loop_s, 2),
                      "measured": ft_plan["measured"]})
        s, measured = finetune.seconds_for(finetune.SCORE_WORK, model, test_units + finetune.text_units(
            t for t, _ in ds.validation))
        parts.append({"part": "scoring", "what": PART_NAMES["scoring"], "estimated_s": round(s, 2), "measured": measured})
    if learning_curve:
        sizes, _ = _curve_sizes(ds)
        rows = [datasets.subsample(ds.train, n, budget.seed) for n in sizes]
        curve_s, measured = 0.0, True
        if "probe" in chosen:
            curve_s, measured = _seconds(PROBE_WORK, model, sum(len(r) for r in rows))
        if curve_finetune and "finetune" in chosen:
            per_point = finetune.Budget(**{**budget.__dict__, "max_seconds": max(1.0, budget.max_seconds / len(sizes))})
            for r in rows:
                p = finetune.plan(r, ds.validation, per_point, model)
                s, m = finetune.seconds_for(finetune.SCORE_WORK, model, test_units)
                curve_s += finetune.loop_seconds(p) + s
                measured = measured and p["measured"] and m
        parts.append({"part": "curve", "what": PART_NAMES["curve"], "estimated_s": round(curve_s, 2),
                      "measured": measured})
    total = sum(p["estimated_s"] for p in parts)
    measured = all(p["measured"] for p in parts)
    some = any(p["measured"] for p in parts)
    basis = (finetune.MEASURED if measured else
             f"rough guess for {', '.join(p['what'] for p in parts if not p['measured'])}: not measured yet in "
             "this process" if some else finetune.GUESSED)
    return {"seconds": round(total, 1), "measured": measured, "basis": basis, "parts": parts, "finetune": ft_plan}


def _compare_run(plan: dict, actual: dict, total_s: float) -> dict:
    """The plan shown before the run against what each part took; a sentence when off by > 25 %."""
    out = finetune.compare(plan["seconds"], total_s)
    out["basis"] = plan["basis"]
    out["parts"] = [{**p, "actual_s": round(actual.get(p["part"], 0.0), 2)} for p in plan["parts"]]
    if out["off"]:
        worst = max(out["parts"], key=lambda p: abs(p["actual_s"] - p["estimated_s"]))
        out["message"] = (f"This run {out['message']}; the estimate was a {plan['basis']}. Largest gap: "
                          f"{worst['what']} (estimated {worst['estimated_s']:.1f} s, took {worst['actual_s']:.1f} s). "
                          "The rates just measured make the next estimate closer.")
    return out


