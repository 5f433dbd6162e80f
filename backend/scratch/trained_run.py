"""What the From scratch tab's two trained models (the tiny GPT, gpt_api.py, and the tiny
encoder-decoder, seq2seq_api.py) share around their loop (loop.py): the plan that says before any
training how long the run should take and the most steps that fit one request's time budget; the
refusal of a run that cannot fit; the session's run, whose model stays in the session also when
stopped early (with the steps that ran); the rates it measures for the next plan; Stop; and the
download, a zip of a `save_pretrained` folder with its tokenizer and a model card.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from backend.engines.scratch import loop
from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.runtime.rates import RATES

HEADROOM = 0.8  # the plan may use this share of the request's budget (the rest: tokenizer, encoding)


def rates(step_key: tuple, eval_key: tuple) -> tuple[float | None, float | None, bool]:
    """Steps and evaluations a second measured in this process for this shape (None: not yet), and
    whether both were."""
    steps_per_s, evals_per_s = RATES.per_s(step_key), RATES.per_s(eval_key)
    return steps_per_s, evals_per_s, steps_per_s is not None and evals_per_s is not None


def most_steps(seconds: Callable[[int], float], allowed: float, top: int, per_step: float, per_eval: float,
               eval_every: int, fixed_s: float) -> int:
    """The most steps (up to `top`) whose `seconds(steps)` fits in `allowed`: a first guess, then the
    exact count (the evaluations come in steps)."""
    if allowed == float("inf"):
        return top
    most = min(top, int(max(0.0, allowed - 2 * per_eval - fixed_s) // (per_step + per_eval / eval_every)))
    while most > 0 and seconds(most) > allowed:
        most -= 1
    while most < top and seconds(most + 1) <= allowed:
        most += 1
    return most


def timed_plan(s: dict, params: int, per_step: float, per_eval: float, measured: bool, top: int,
               fixed_s: float = 0.0) -> dict:
    """The plan of `s["steps"]` steps: evaluations at step 0, every `s["eval_every"]` and at the last
    step, plus `fixed_s` (a final test); its seconds, whether it fits, and the most steps that would."""
    def seconds(n: int) -> float:
        return n * per_step + (n // s["eval_every"] + 2) * per_eval + fixed_s

    limit = budget.default_seconds()
    allowed = limit * HEADROOM if limit > 0 else float("inf")
    most = most_steps(seconds, allowed, top, per_step, per_eval, s["eval_every"], fixed_s)
    return {"steps": s["steps"], "parameters": params, "seconds": round(seconds(s["steps"]), 1),
            "seconds_per_step": round(per_step, 4), "evals": s["steps"] // s["eval_every"] + 2, "measured": measured,
            "basis": "measured in this process" if measured else "rough guess: nothing measured yet in this process",
            "budget_s": limit, "fits": seconds(s["steps"]) <= allowed, "max_steps": most}


def refuse_unless_fits(plan: dict, noun: str, smaller: str) -> None:
    """An InputError naming the most steps that fit, unless the plan fits one request."""
    if plan["fits"]:
        return
    raise InputError(f"This run does not fit one request: {plan['steps']:,} steps of a {plan['parameters']:,}-parameter "
                     f"{noun} take about {plan['seconds']:.0f} s ({plan['basis']}), over {HEADROOM:.0%} of "
                     f"this server's {plan['budget_s']:g} s budget per request. Ask for at most {plan['max_steps']:,} "
                     f"steps, or a smaller model ({smaller}).")


@dataclass
class Run:
    """One session's run: its stop flag (`session.stop`), what the loop fills (`outcome`), the model
    it keeps (`trained`, set once built) and how to describe a run that ends early (`describe`)."""

    session: Any
    outcome: loop.Outcome = field(default_factory=loop.Outcome)
    trained: Any = None
    describe: Callable[[], dict] | None = None


@contextlib.contextmanager
def session_run(store, session_id: str, nbytes: int) -> Iterator[Run]:
    """Begin a run in the session (refused when one is going or no room); at its end, however it ends
    (Stop, the time budget, an error, a closed page), the steps that ran stay in the session."""
    run = Run(store.begin(session_id, nbytes))
    try:
        yield run
    finally:
        out, trained = run.outcome, run.trained
        if trained is not None and out.steps_run and "steps_run" not in trained.info and run.describe is not None:
            trained.model = out.model.eval()
            trained.info.update(run.describe())
        store.end(session_id, trained if trained is not None and out.steps_run else None)


def measured(step_key: tuple, eval_key: tuple, out: loop.Outcome, train_s: float) -> None:
    """The run's rates, so the next plan of this shape says "measured"."""
    if out.steps_run:
        RATES.add(step_key, out.steps_run, train_s)
        RATES.add(eval_key, len(out.evals), sum(e["seconds"] for e in out.evals))


def to_the_end(events: Iterator[dict]) -> dict:
    """A training generator run to the end -> its "done" event's result."""
    result = None
    for ev in events:
        if ev["event"] == "done":
            result = ev["result"]
    return result


def stop(store, session_id: str, wait_s: float = 0.0) -> dict:
    """Ask the session's run to stop after its current step (the model so far is kept). `wait_s`: wait
    that long for it to end; "ended": it has, its result is out."""
    stopping = store.request_stop(session_id)
    return {"stopping": stopping, "ended": stopping and store.wait_ended(session_id, wait_s)}


def drop(store, session_id: str) -> None:
    if session_id:
        store.drop(session_id)


def export(store, session_id: str, root: str | None, stem_of: Callable[[Any], str],
           tokenizer_kwargs: Callable[[Any], dict], card_of: Callable[[Any, str], str]) -> dict:
    """The session's model as a zip of a `save_pretrained` folder named `stem_of(model)`, with its
    tokenizer (PreTrainedTokenizerFast's `tokenizer_kwargs(model)`) and model card (`card_of(model,
    stem)`), in the session's private folder."""
    from transformers import PreTrainedTokenizerFast

    m = store.trained(session_id)
    stem = stem_of(m)

    def write(folder) -> None:
        m.model.save_pretrained(folder)
        PreTrainedTokenizerFast(tokenizer_object=m.tokenizer, **tokenizer_kwargs(m)).save_pretrained(folder)
        (folder / "README.md").write_text(card_of(m, stem), encoding="utf-8")

    zpath, files = store.zipped(session_id, root, stem, write)
    return {"path": str(zpath), "files": files, "megabytes": round(zpath.stat().st_size / 1e6, 2),
            "steps_run": m.info["steps_run"], "parameters": m.info["parameters"]}
