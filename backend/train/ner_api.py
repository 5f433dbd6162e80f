"""The Train tab's token-classification (NER) task, the book's chapter 4: fine-tune the embedder
with a linear head per token on the shipped NER set or an upload, for the number of epochs the
learner chose (a plan shown first, refused when the request's budget cannot hold it), then
show seqeval's scores per entity type, the tag confusion matrix and the highest-loss sentences.

The trained model replaces the session's previous one in the Train store (one model per
session), where `predict_ner` and `export_ner` find it. Model work runs in ner_gpu's stateless
GPU tasks; the session, the plan and the result are built here, in the app's process.
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import asdict, dataclass, replace
from typing import Iterator

from backend import hub
from backend.engines.ner import data as ner_data
from backend.engines.ner.token_classification import Recipe
from backend.hub import ner_builder
from backend.runtime.config import public_mode
from backend.runtime.errors import InputError
from backend.runtime import stops
from backend.runtime.rates import RATES
from backend.train import ner_gpu, ner_plan, ner_results, ner_upload
from backend.train.gpu import ROLE
from backend.train.store import get_store
from backend.runtime.validation import as_bool, as_float, as_int, one_of
from backend.train.ner_use import TASK, NerTrained  # noqa: F401  (re-exported for the package)

STOP_WAIT_S = 5.0  # after Stop, how long a stream that cannot hear the flag (ZeroGPU) may run on
PUBLIC_MAX_EPOCHS = 5  # a public server's limit (each epoch of the shipped set is a few budgets of work)
MAX_EPOCHS = 20  # a server of your own


def max_epochs() -> int:
    """The most epochs /train_ner takes here: the Train tab's slider offers exactly this, so the
    page never offers what the API refuses."""
    return PUBLIC_MAX_EPOCHS if public_mode() else MAX_EPOCHS


@dataclass
class NerArgs:
    """The NER run's parameters, checked by name before any model loads."""

    source: str
    file: str | None
    recipe: Recipe
    max_sentences: int
    override: str | None


def check_args(source="shipped", file=None, epochs=1, max_sentences=0, learning_rate=None, batch_size=16,
               word_shapes=True, seed=0, override=None) -> NerArgs:
    source = one_of("source", source, ner_upload.SOURCES, default="shipped")
    if file is not None and not isinstance(file, str):
        raise InputError("file must be an uploaded file: in gradio_client, pass handle_file(path).")
    base = ner_builder.RECIPE_SETTINGS
    shapes = as_bool("word_shapes", word_shapes)
    recipe = replace(
        base, epochs=as_int("epochs", epochs, lo=1, hi=max_epochs()),
        batch_size=as_int("batch_size", batch_size, lo=2, hi=64),
        learning_rate=as_float("learning_rate", base.learning_rate if learning_rate in (None, "") else learning_rate,
                               lo=1e-7, hi=1e-2),
        seed=as_int("seed", seed, lo=0, hi=2**31 - 1),
        shape_dim=(base.shape_dim or 16) if shapes else 0, shape_input=base.shape_input and shapes)
    cap = as_int("max_sentences", max_sentences, lo=0, hi=ner_data.MAX_SENTENCES)
    return NerArgs(source, file, recipe, cap, override)


def _data(a: NerArgs) -> tuple[ner_upload.NerSet, list]:
    """The set, and the train sentences this run uses (a seeded slice of `max_sentences`, or all)."""
    ds = ner_upload.load(a.source, a.file, a.recipe.seed)
    train = list(ds.train)
    if a.max_sentences and a.max_sentences < len(train):
        train = random.Random(f"ner-slice-{a.recipe.seed}").sample(train, a.max_sentences)
        ds.notices.append(f"Trained on {a.max_sentences} of {len(ds.train)} training sentences (max_sentences).")
    return ds, train


def estimate(source="shipped", file=None, epochs=1, max_sentences=0, learning_rate=None, batch_size=16,
             word_shapes=True, seed=0, override=None) -> dict:
    """The run's plan before it starts (no model runs): steps, seconds per part, the total, the
    basis (measured here or a rough guess), whether it fits the request's budget, and the data."""
    a = check_args(source, file, epochs, max_sentences, learning_rate, batch_size, word_shapes, seed, override)
    ds, train = _data(a)
    return {**ner_plan.plan(train, ds.validation, ds.test, a.recipe, a.override), "dataset": ds.describe()}


def _load_timed(override, took: dict):
    t0 = time.perf_counter()
    was_loaded = hub.get_hub().is_loaded(ROLE, override)
    lm = hub.load(ROLE, override)
    if not was_loaded:
        took["load"] = time.perf_counter() - t0
        RATES.add(ner_plan.key(ner_plan.LOAD_WORK, override), 1, took["load"])
    return lm


def train_iter(session_id: str, source="shipped", file=None, epochs=1, max_sentences=0, learning_rate=None,
               batch_size=16, word_shapes=True, seed=0, override=None) -> Iterator[dict]:
    """Train; yields {"event": "estimate" | "step" | "scoring", ...} as it goes, then {"event":
    "done", "result"} (the result says `stopped` when Stop ended it: no model is kept then)."""
    t_start = time.perf_counter()
    a = check_args(source, file, epochs, max_sentences, learning_rate, batch_size, word_shapes, seed, override)
    ds, train = _data(a)  # a bad upload fails before any model loads
    plan = ner_plan.plan(train, ds.validation, ds.test, a.recipe, a.override)
    if not plan["fits_budget"]:
        raise InputError(plan["advice"])
    yield {"event": "estimate", **plan}
    store = get_store()
    session = store.begin(session_id)
    trained, took = None, {}
    try:
        lm = _load_timed(a.override, took)
        data = {"train": train, "validation": ds.validation, "test": ds.test}
        run_id = f"{session_id}-{uuid.uuid4().hex}"
        with stops.named(session.stop) as stop_key:  # Stop reaches a validation or scoring pass too
            stream = ner_gpu.train_stream(run_id, a.override, data, ds.labels, a.recipe, ner_plan.limit_s(), stop_key)
            out = yield from _drive(stream, run_id, session.stop)
        result = {"task": TASK, "dataset": ds.describe(), "model": lm.describe(), "recipe": asdict(a.recipe),
                  "plan": plan, "train_sentences": len(train), "stopped": out is None}
        if out is None:
            result["note"] = ("Stopped before training and its test scoring finished: the test pass was skipped "
                              "and no model was kept (the session keeps its previous one).")
        else:
            trained = _finish(result, out, ds, train, a, lm, took)
        result["seconds"] = round(time.perf_counter() - t_start, 2)
        result["estimate"] = ner_plan.compare(plan, took, result["seconds"])
        yield {"event": "done", "result": result}
    finally:
        store.end(session_id, trained)


def _drive(stream, run_id: str, stop) -> Iterator[dict]:
    """Relay the training stream's events; on Stop, halt the run (or close a stream the flag
    cannot reach). Returns the "trained" event, or None when stopped."""
    asked = None
    try:
        for ev in stream:
            if ev["event"] == "trained":
                return ev
            if ev["event"] == "stopped":
                return None
            yield ev
            if stop.is_set() and asked is None:
                asked = time.monotonic()
                if ner_gpu.halt(run_id):
                    continue
            if asked is not None and time.monotonic() - asked > STOP_WAIT_S:
                return None
        return None
    finally:
        stream.close()


def _finish(result: dict, out: dict, ds, train, a: NerArgs, lm, took: dict) -> NerTrained:
    """Fill `result` from the "trained" event; record the rates it measured; the session's model."""
    val, test = out["validation"], out["test"]
    train_words = ner_plan.words(train) * a.recipe.epochs
    score_words = ner_plan.words(ds.validation) + ner_plan.words(ds.test)
    ner_plan.record(train_words, out["step_seconds"] * out["steps"], score_words, out["score_s"], a.override)
    took.update(train=out["step_seconds"] * out["steps"], validation=out["seconds"] - out["step_seconds"] * out["steps"],
                scoring=out["score_s"])
    per_epoch = max(1, result["plan"]["steps_per_epoch"])
    result.update(
        steps=out["steps"], total_steps=out["total_steps"], epochs=a.recipe.epochs, best_step=out["best_step"],
        best_epoch=-(-out["best_step"] // per_epoch), step_s=round(out["step_seconds"], 4),
        train_s=round(out["seconds"], 2), losses=[round(l, 4) for l in out["losses"]],
        evals=[{"step": e["step"], "f1": round(e["f1"], 4)} for e in out["evals"]],
        validation=ner_results.scores(val["report"], "validation"), test=ner_results.scores(test["report"], "test"),
        confusion=ner_results.confusion([s.tags for s in ds.test], test["pred"], ds.labels, "test"),
        errors=ner_results.error_analysis([s.tokens for s in ds.validation], [s.tags for s in ds.validation],
                                          val["pred"], val["losses"], "validation"),
        predictions={"test": ner_results.predictions([s.tokens for s in ds.test], [s.tags for s in ds.test],
                                                     test["pred"])})
    return NerTrained(labels=list(ds.labels), dataset=ds.describe(), checkpoint=lm.checkpoint, override=a.override,
                      weights=out["weights"], recipe=a.recipe,
                      scores={TASK: {"f1": result["test"]["overall"]["f1"], "n": len(ds.test),
                                     "per_type": {t: r["f1"] for t, r in result["test"]["per_type"].items()},
                                     "steps": out["steps"]}})


def train(session_id: str, source="shipped", file=None, epochs=1, max_sentences=0, learning_rate=None,
          batch_size=16, word_shapes=True, seed=0, override=None) -> dict:
    """`train_iter` run to the end -> its result."""
    result = None
    for ev in train_iter(session_id, source, file, epochs, max_sentences, learning_rate, batch_size,
                         word_shapes, seed, override):
        if ev["event"] == "done":
            result = ev["result"]
    return result
