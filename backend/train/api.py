"""Role-level entry points of the Train tab (and of scripts): train a classifier three ways on
the same split, compare them, keep the result in the caller's session, and use it.

Methods (the book's chapters 2 and 9):
- `zero_shot`: no training; cosine similarity between the text and each label (the
  Pipelines' embedding-similarity classifier), the baseline;
- `probe`: feature extraction: the frozen embedder's mean-pooled hidden states into a
  logistic regression;
- `finetune`: the whole encoder + a classification head trained for a few epochs, bounded
  by epochs, examples and seconds, stoppable, keeping the best checkpoint.

Models run only in stateless GPU tasks (features.py, finetune.py); the sessions, the
training state and the loop live here, in the app's process. The logistic regression fits on
the CPU in this process (a fraction of a second; no model runs).
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

import numpy as np

from backend import hub
from backend.runtime import config
from backend.runtime.config import public_mode
from backend.runtime.errors import InputError
from backend.engines.classify.similarity import DEFAULT_TEMPLATE
from backend.engines.classify import datasets
from backend.runtime.rates import RATES
from backend.train import features
from backend.train import gpu
from backend.train import ranking
from backend.train.run_plan import (
    _curve_sizes,
    LOAD_WORK,
    PROBE_WORK,
    _compare_run,
    _plan_run,
)
from backend.engines.classify import finetune
from backend.engines.classify import metrics
from backend.train import probe as logistic
from backend.train import use
from backend.train.store import Trained, get_store
from backend.runtime.validation import as_bool, as_float, as_int, check_text, one_of, opt_text

METHODS = ("zero_shot", "probe", "finetune")
METHOD_NAMES = {"zero_shot": f"zero-shot ({config.method_name(config.METHOD_EMBEDDING)})", "probe": "feature extraction + logistic regression",
                "finetune": "fine-tuning"}
HARDEST_K = 10
MAP_MAX_POINTS = 2000
MAX_SECONDS = 900
MAX_SECONDS_PUBLIC = 180
ProgressFn = Callable[[float, str], None]


def _quiet(fraction: float, desc: str) -> None:
    pass


# ----------------------------------------------------------------------------- inputs
def list_datasets() -> list[dict]:
    """The shipped sets: name, labels, sizes and counts per split."""
    return [datasets.load_shipped(n).describe() for n in datasets.SHIPPED]


def load_dataset(dataset: str = "emotion", file: str | None = None, text_column: str | None = "",
                 label_column: str | None = "") -> datasets.Dataset:
    """A shipped set by name, or (dataset="upload") a CSV/JSONL file with text and label columns."""
    dataset, file, text_column, label_column = _data_args(dataset, file, text_column, label_column)
    if dataset == "upload":
        return datasets.read_upload(file, text_column, label_column)
    return datasets.load_shipped(dataset)


def _data_args(dataset, file, text_column, label_column) -> tuple:
    """The data parameters checked by name, whatever the dataset (an API caller may send anything)."""
    try:
        dataset = one_of("dataset", dataset, datasets.SHIPPED + ("upload",), default="emotion")
    except InputError:
        shown = repr(dataset)[:60] if isinstance(dataset, (str, int, float)) else type(dataset).__name__
        raise InputError(f"Unknown dataset {shown}. dataset must be one of: {', '.join(datasets.SHIPPED)}, or "
                         "'upload' with a file.") from None
    text_column = opt_text("text_column", text_column, max_chars=datasets.MAX_LABEL_CHARS * 4) or ""
    label_column = opt_text("label_column", label_column, max_chars=datasets.MAX_LABEL_CHARS * 4) or ""
    if file is not None and not isinstance(file, str):
        raise InputError("file must be an uploaded file: in gradio_client, pass handle_file(path).")
    if dataset == "upload" and not file:
        raise InputError("dataset is 'upload' but no file came: upload a .csv or .jsonl file with a text "
                         "and a label column.")
    return dataset, file, text_column, label_column


def _methods(methods) -> list[str]:
    """The methods parameter: a list of names (or one comma-separated string), checked by name."""
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.replace(";", ",").split(",")]
    if methods is None:
        methods = []
    if not isinstance(methods, (list, tuple)) or not all(isinstance(m, str) for m in methods):
        raise InputError(f"methods must be a list of method names, some of: {', '.join(METHODS)}.")
    items = [m.strip() for m in methods if m.strip()]
    if not items:
        raise InputError(f"methods: choose at least one of {', '.join(METHODS)}.")
    bad = [m for m in items if m not in METHODS]
    if bad:
        shown = ", ".join(repr(m[:40]) for m in bad[:5])
        raise InputError(f"Unknown method(s) {shown} in methods; choose from {', '.join(METHODS)}.")
    return [m for m in METHODS if m in items]


def _budget(epochs, max_examples, max_seconds, learning_rate, batch_size, seed) -> finetune.Budget:
    cap = MAX_SECONDS_PUBLIC if public_mode() else MAX_SECONDS
    return finetune.Budget(epochs=as_int("epochs", epochs, lo=1, hi=20),
                     max_examples=as_int("max_examples", max_examples, lo=8, hi=datasets.MAX_ROWS),
                     max_seconds=as_float("max_seconds", max_seconds, lo=1, hi=cap),
                     learning_rate=as_float("learning_rate", learning_rate, lo=1e-7, hi=1e-2),
                     batch_size=as_int("batch_size", batch_size, lo=2, hi=128),
                     seed=as_int("seed", seed, lo=0, hi=2**31 - 1))


def estimate(dataset: str = "emotion", file: str | None = None, text_column: str | None = "",
             label_column: str | None = "", epochs: int = 3, max_examples: int = 2000,
             max_seconds: float = 60, override: str | None = None, methods=METHODS,
             batch_size: int = 16, learning_curve: bool = True, curve_finetune: bool = False,
             seed: int = 0) -> dict:
    """How long the whole run should take, before it starts (no model runs): `seconds` for every
    part (`parts`), `basis` (measured in this process, or a rough guess), and fine-tuning's plan
    (`finetune`: its steps, whether they fit `max_seconds`, and if not what to lower)."""
    ds = load_dataset(dataset, file, text_column, label_column)
    b = _budget(epochs, max_examples, max_seconds, 5e-5, batch_size, seed)
    chosen = _methods(methods)
    plan = _plan_run(ds, chosen, b, as_bool("learning_curve", learning_curve),
                     as_bool("curve_finetune", curve_finetune), override)
    ft = plan["finetune"]
    plan.update(examples=min(len(ds.train), b.max_examples), epochs=b.epochs, budget_s=b.max_seconds,
                fits_budget=ft is None or ft["fits_budget"], methods=chosen, dataset=ds.describe())
    return plan


# ----------------------------------------------------------------------------- helpers
def _xy(rows):
    return [t for t, _ in rows], np.array([y for _, y in rows], dtype=np.int64)


def _summary(report: dict) -> dict:
    return {k: report[k] for k in ("accuracy", "macro_f1", "loss", "n", "ci95")}


def _map(feats: np.ndarray, ys: np.ndarray, texts: list[str], labels: list[str], title: str) -> dict:
    idx = np.arange(len(texts))[:MAP_MAX_POINTS]
    coords, explained = metrics.pca_2d(feats[idx])
    return {"method": "PCA", "of": title, "explained_variance": explained, "label_names": list(labels),
            "x": np.round(coords[:, 0], 4).tolist(), "y": np.round(coords[:, 1], 4).tolist(),
            "labels": [labels[int(ys[i])] for i in idx], "texts": [texts[i][:120] for i in idx]}


# ----------------------------------------------------------------------------- training
def train_iter(session_id: str, dataset: str = "emotion", file: str | None = None,
               text_column: str | None = "", label_column: str | None = "",
               methods=METHODS, epochs: int = 3, max_examples: int = 2000, max_seconds: float = 60,
               learning_rate: float = 1e-4, batch_size: int = 16, learning_curve: bool = True,
               curve_finetune: bool = False, seed: int = 0, override: str | None = None,
               progress: ProgressFn | None = None) -> Iterator[dict]:
    """Train and compare; yields events as it goes ({"event": "stage" | "estimate" | "step" |
    "epoch", ...}) and finally {"event": "done", "result": {...}}. The session keeps the model."""
    say = progress or _quiet
    t_start = time.perf_counter()
    chosen = _methods(methods)
    budget = _budget(epochs, max_examples, max_seconds, learning_rate, batch_size, seed)
    learning_curve, curve_finetune = as_bool("learning_curve", learning_curve), as_bool("curve_finetune", curve_finetune)
    say(0.0, "Reading the data")
    ds = load_dataset(dataset, file, text_column, label_column)  # a bad upload fails before any model loads
    plan = _plan_run(ds, chosen, budget, learning_curve, curve_finetune, override)  # what the tab showed
    took: dict[str, float] = {}
    store = get_store()
    session = store.begin(session_id)
    trained = None
    try:
        lm = _load_timed(override, progress, took)
        labels, shipped = ds.labels, ds.source == "shipped"
        (tr_x, tr_y), (va_x, _), (te_x, te_y) = _xy(ds.train), _xy(ds.validation), _xy(ds.test)
        result = {"dataset": ds.describe(), "methods": {}, "hardest": {}, "model": lm.describe(),
                  "budget": budget.__dict__.copy(), "notes": []}
        trained = Trained(labels=labels, dataset=ds.describe(), checkpoint=lm.checkpoint, override=override)

        def stage(fraction, desc):
            say(fraction, desc)
            return {"event": "stage", "fraction": round(fraction, 3), "desc": desc}

        yield stage(0.05, "Extracting features (mean-pooled hidden states)")
        t0 = time.perf_counter()
        feats = {name: features.extract(x, lm.checkpoint, override, cache=shipped)
                 for name, x in (("train", tr_x), ("validation", va_x), ("test", te_x))}
        features_s = took["features"] = time.perf_counter() - t0
        result["map"] = _map(feats["train"], tr_y, tr_x, labels, "the frozen encoder's hidden states (train split)")

        zs_test, stopped = None, session.stop.is_set  # after Stop no further part runs
        if "zero_shot" in chosen and not stopped():
            yield stage(0.2, f"Zero-shot baseline ({config.method_name(config.METHOD_EMBEDDING)})")
            t0 = time.perf_counter()
            zs_test = features.zero_shot_probs(te_x, labels, DEFAULT_TEMPLATE, override)
            rep = metrics.report(te_y, zs_test, labels)
            took["zero_shot"] = time.perf_counter() - t0
            result["methods"]["zero_shot"] = {**rep, "seconds": round(took["zero_shot"], 3),
                                              "template": DEFAULT_TEMPLATE, "test_correct": _correct(zs_test, te_y)}
        if "probe" in chosen and not stopped():
            yield stage(0.25, "Fitting the logistic regression on the features")
            _probe(ds, feats, budget, override, features_s, result, trained, took)
        if "finetune" in chosen:
            yield from _finetune(ds, budget, session.stop, override, say, stage, feats, result, trained,
                                 plan["finetune"], took)
        skipped = [METHOD_NAMES[m] for m in chosen if m not in result["methods"]] + (["the learning curve"]
                                                                                    if learning_curve else [])
        if stopped() and skipped:
            result["notes"].append(f"Stopped: {', '.join(skipped)} did not run.")
        elif learning_curve:
            yield stage(0.9, "Learning curve")
            t0 = time.perf_counter()
            result["learning_curve"] = _learning_curve(ds, feats, zs_test, chosen, budget, curve_finetune,
                                                       session.stop, override)
            took["curve"] = time.perf_counter() - t0
        result["best_method"] = _best(trained)
        result["ranking"] = ranking.rank(result["methods"])
        result["seconds"] = round(time.perf_counter() - t_start, 2)
        result["estimate"] = _compare_run(plan, took, result["seconds"])
        say(1.0, "Done")
        yield {"event": "done", "result": result}
    finally:  # also on an error or a cancel: what was trained so far stays in the session
        store.end(session_id, trained if trained is not None and _best(trained) else None)


def _load_timed(override, progress, took: dict):
    """The embedder, and the seconds of a first load (a rate for the next plan)."""
    t0 = time.perf_counter()
    was_loaded = hub.get_hub().is_loaded(gpu.ROLE, override)
    lm = hub.load(gpu.ROLE, override, progress)
    if not was_loaded:
        took["load"] = time.perf_counter() - t0
        RATES.add(finetune.rate_key(LOAD_WORK, override or ""), 1, took["load"])
    return lm


def _probe(ds, feats, budget, override, features_s: float, result: dict, trained: Trained, took: dict) -> None:
    """The feature-extraction method: a logistic regression on the frozen features, scored on test."""
    labels = ds.labels
    (_, tr_y), (va_x, va_y), (_, te_y) = _xy(ds.train), _xy(ds.validation), _xy(ds.test)
    t0 = time.perf_counter()
    fitted = logistic.fit(feats["train"], tr_y, len(labels), seed=budget.seed)
    fit_s = time.perf_counter() - t0
    RATES.add(finetune.rate_key(PROBE_WORK, override or ""), len(tr_y), fit_s)
    probs = fitted.predict_proba(feats["test"])
    rep = metrics.report(te_y, probs, labels)
    result["methods"]["probe"] = {**rep, "fit_s": round(fit_s, 4), "features_s": round(features_s, 3),
                                  "iterations": fitted.iterations, "test_correct": _correct(probs, te_y)}
    result["hardest"]["probe"] = metrics.hardest(va_x, va_y, fitted.predict_proba(feats["validation"]), labels,
                                                 HARDEST_K)
    trained.probe = fitted
    trained.scores["probe"] = _summary(rep)
    took["probe"] = time.perf_counter() - t0


def _finetune(ds, budget, stop, override, say, stage, feats, result, trained, plan, took) -> Iterator[dict]:
    """The fine-tuning method of `train_iter`: the loop's events, then the best checkpoint scored on
    test (its hardest validation examples and its map), written into `result` and `trained`."""
    labels = ds.labels
    (va_x, va_y), (te_x, te_y) = _xy(ds.validation), _xy(ds.test)
    yield stage(0.3, "Fine-tuning: measuring one step for the estimate")
    ft_train = datasets.cap_examples(ds.train, budget.max_examples, budget.seed)
    if len(ft_train) < len(ds.train):
        result["notes"].append(f"Fine-tuning used {len(ft_train)} of {len(ds.train)} training "
                               f"examples (max_examples).")
    gen = finetune.run(ft_train, ds.validation, len(labels), budget, gpu.HubWorker(override), stop)
    while True:
        try:
            ev = next(gen)
        except StopIteration as done:
            outcome: finetune.Outcome = done.value
            break
        if ev["event"] == "step":
            say(0.3 + 0.55 * ev["step"] / max(1, ev["total_steps"]),
                f"Fine-tuning: step {ev['step']}/{ev['total_steps']}, loss {ev['losses'][-1]:.3f}")
        elif ev["event"] == "estimate":
            fits = "fits" if ev["fits_budget"] else "exceeds"
            say(0.3, f"Fine-tuning: about {ev['estimated_s']:.0f} s for {ev['steps']} steps "
                     f"({fits} the {budget.max_seconds:.0f} s budget)")
        yield {**ev, "event": ev["event"], "method": "finetune"}
    took["finetune"] = outcome.seconds
    ft = {"stopped": outcome.stopped, "steps": outcome.steps, "total_steps": outcome.total_steps,
          "seconds": outcome.seconds, "train_s": outcome.train_s, "validation_s": outcome.eval_s,
          "plan": plan, "estimate": outcome.estimate, "losses": [round(l, 4) for l in outcome.losses],
          "epochs": outcome.epochs, "best_epoch": outcome.best_epoch, "best_validation": outcome.best_val,
          "examples": len(ft_train)}
    ft["vs_plan"] = finetune.compare(finetune.loop_seconds(plan), outcome.seconds)
    result["methods"]["finetune"] = ft
    if outcome.weights is None:
        ft["note"] = "Stopped before the first training step: no fine-tuned model."
        return
    trained.weights = outcome.weights  # kept, scored on test or not
    test = val = None
    if outcome.stopped != "stopped" and not stop.is_set():
        yield stage(0.86, "Scoring the best fine-tuned checkpoint")
        t0 = time.perf_counter()
        test = finetune.predict_proba(gpu.HubWorker(override), outcome.weights, te_x, len(labels), stop=stop)
        val = test and finetune.predict_proba(gpu.HubWorker(override), outcome.weights, va_x, len(labels), stop=stop)
        took["scoring"] = time.perf_counter() - t0
    if not test or not val:  # Stop: the test pass is skipped (it cost up to 40 s after Stop on a loaded box)
        ft["test_skipped"] = True
        ft["note"] = ("Stopped: the test pass was skipped, so the fine-tuned model has no test score. It is kept ("
                      + (f"the best checkpoint by validation, epoch {outcome.best_epoch}" if outcome.best_val
                         else f"its state at epoch {outcome.best_epoch}, not scored") + ").")
        return
    probs, pooled = test
    ft.update(metrics.report(te_y, probs, labels), test_correct=_correct(probs, te_y))
    result["hardest"]["finetune"] = metrics.hardest(va_x, va_y, val[0], labels, HARDEST_K)
    result["map_finetuned"] = _map(pooled, te_y, te_x, labels, "the fine-tuned encoder's hidden states (test split)")
    # Before and after on the same texts: the frozen map moves to the test split too.
    result["map"] = _map(feats["test"], te_y, te_x, labels, "the frozen encoder's hidden states (test split)")
    trained.scores["finetune"] = {**_summary(ft), "cut": ranking.is_cut(ft)}


def _correct(probs, ys) -> list[int]:
    """1 where the method's top label is the true one, per test example (what its accuracy interval resamples)."""
    return (np.asarray(probs).argmax(1) == np.asarray(ys)).astype(int).tolist()


def _best(trained: Trained) -> str | None:
    """The trained method with the best test accuracy (probe wins a tie: it is cheaper); a run the budget cut
    short only when no complete one has a score."""
    usable = {m: trained.scores[m]["accuracy"] for m in trained.methods() if m in trained.scores}
    usable = {m: a for m, a in usable.items() if not trained.scores[m].get("cut")} or usable
    # A model with no test score (fine-tuning stopped before its test pass) is used only when it is all there is.
    trained.best = max(usable, key=usable.get) if usable else next(iter(trained.methods()), None)
    return trained.best


def _learning_curve(ds, feats, zs_test, chosen, budget, curve_finetune, stop, override) -> dict:
    """Test accuracy of each method with 8, 16, 32... examples per label, and with all of them."""
    sizes, notes = _curve_sizes(ds)
    te_x, te_y = _xy(ds.test)
    index = {t: i for i, (t, _) in enumerate(ds.train)}
    out = {"sizes": ["all" if n is None else n for n in sizes], "examples": [], "notes": notes,
           "test_n": int(len(te_y))}
    zs_acc = metrics.accuracy(te_y, zs_test.argmax(1)) if zs_test is not None else None
    if "zero_shot" in chosen:
        out["zero_shot"] = [round(zs_acc, 4)] * len(sizes)
    if "probe" in chosen:
        out["probe"] = []
    do_ft = curve_finetune and "finetune" in chosen
    if do_ft:
        out["finetune"] = []
        per_point = finetune.Budget(**{**budget.__dict__, "max_seconds": max(1.0, budget.max_seconds / len(sizes))})
    for n in sizes:
        rows = datasets.subsample(ds.train, n, budget.seed)
        out["examples"].append(len(rows))
        x_idx = [index[t] for t, _ in rows]
        y = np.array([y for _, y in rows], dtype=np.int64)
        if "probe" in chosen and stop.is_set():  # Stop during the curve: the points left stay empty
            out["probe"].append(None)
        elif "probe" in chosen:
            fitted = logistic.fit(feats["train"][x_idx], y, len(ds.labels), seed=budget.seed)
            out["probe"].append(round(metrics.accuracy(te_y, fitted.predict_proba(feats["test"]).argmax(1)), 4))
        if do_ft:
            if stop.is_set():
                out["finetune"].append(None)
                continue
            gen = finetune.run(rows, ds.validation, len(ds.labels), per_point, gpu.HubWorker(override), stop)
            while True:
                try:
                    next(gen)
                except StopIteration as done:
                    res = done.value
                    break
            scored = None if res.weights is None or res.stopped == "stopped" else finetune.predict_proba(
                gpu.HubWorker(override), res.weights, te_x, len(ds.labels), stop=stop)
            out["finetune"].append(None if scored is None else round(metrics.accuracy(te_y, scored[0].argmax(1)), 4))
    if not do_ft and "finetune" in chosen:
        out["notes"].append("Fine-tuning is not on the curve (turn on curve_finetune; it costs one "
                            "fine-tuning run per point).")
    return out


def train(session_id: str, dataset: str = "emotion", file: str | None = None, text_column: str | None = "",
          label_column: str | None = "", methods=METHODS, epochs: int = 3, max_examples: int = 2000,
          max_seconds: float = 60, learning_rate: float = 1e-4, batch_size: int = 16,
          learning_curve: bool = True, curve_finetune: bool = False, seed: int = 0,
          override: str | None = None, progress: ProgressFn | None = None) -> dict:
    """`train_iter` run to the end -> its result."""
    result = None
    for ev in train_iter(session_id, dataset, file, text_column, label_column, methods, epochs,
                         max_examples, max_seconds, learning_rate, batch_size, learning_curve,
                         curve_finetune, seed, override, progress):
        if ev["event"] == "done":
            result = ev["result"]
    return result


def stop(session_id: str, wait_s: float = 0.0) -> dict:
    """Ask the session's running training to stop after its current chunk (it keeps the best
    checkpoint so far). `wait_s`: wait that long for it to end; "ended": it has, its result is out."""
    stopping = get_store().request_stop(session_id)
    return {"stopping": stopping, "ended": stopping and get_store().wait_ended(session_id, wait_s)}


def predict_trained(session_id: str, text: str, method: str = "") -> dict:
    """Classify `text` with the classifier trained in this session (`method` "" = its best)."""
    text = check_text(text, "text")
    method = one_of("method", method, ("best", "probe", "finetune"), default="best")
    t = get_store().trained(session_id)
    method = use.pick(t, method)
    t0 = time.perf_counter()
    probs = use.probabilities(t, method, [text])[0]
    order = np.argsort(-probs, kind="stable")
    score = t.scores.get(method, {})
    return {"text": text, "labels": [t.labels[i] for i in order], "scores": [round(float(probs[i]), 4) for i in order],
            "label": t.labels[int(order[0])], "method": method, "method_name": METHOD_NAMES[method],
            "seconds": round(time.perf_counter() - t0, 3),
            "model": {"role": gpu.ROLE, "checkpoint": t.checkpoint, "method": method, "source": "session",
                      "trained_on": t.dataset["name"], "test_accuracy": score.get("accuracy"),
                      "test_macro_f1": score.get("macro_f1"), "test_n": score.get("n"),
                      "test_ci95": score.get("ci95"), "labels": list(t.labels)}}


def session_model(session_id: str) -> dict | None:
    """What the session holds: dataset, methods, test scores (None before any training)."""
    s = get_store().session(session_id)
    t = s.trained
    if t is None:
        return None
    return {"dataset": t.dataset["name"], "labels": t.labels, "methods": t.methods(), "best": t.best,
            "scores": t.scores, "checkpoint": t.checkpoint, "megabytes": round(t.nbytes / 1e6, 1)}


def drop_session(session_id: str) -> None:
    """Forget a session's trained model (a closed page); idle eviction covers the rest."""
    if session_id:
        get_store().drop(session_id)
