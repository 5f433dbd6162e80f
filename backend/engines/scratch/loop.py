"""The one training loop of the models trained from scratch: the tiny GPT (tiny_gpt.py), the tiny
encoder-decoder (seq2seq.py) and the scaling family's sizes (scaling.py, which hands its own
chunks to `train_chunk`).

`train_chunk` runs a few AdamW steps in a stateless GPU task: the (model, optimizer) bundle goes
in and comes back (on ZeroGPU a worker keeps nothing), the model's loss on a batch comes from the
`loss(model, batch)` it is handed, and Stop is checked before each step (backend/runtime/stops.py).
`run` is the loop around it: an evaluation at step 0, then chunks of at most `report_every` steps
(a "step" event each, with the new losses), an evaluation every `eval_every` steps and at the end
("eval" events), stopping cooperatively on the stop flag or the request's time budget and keeping
the model trained so far in its `Outcome`. The learning rate warms up, then follows a cosine
(`schedule`). Every model here trains on one torch thread (`one_thread`).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from backend.runtime import budget
from backend.runtime import stops
from backend.runtime.device import gpu_task

DIVERGED = "diverged (loss is not finite: use a smaller learning rate)"


@contextlib.contextmanager
def one_thread():
    """Run a block on one torch thread, then give the thread back its count. A model this small
    gains nothing from more: on this 2-core box, busy with other work, a step took 0.06 s on one
    thread and 1.2 s on two (the threads wait for each other)."""
    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before != 1:
            torch.set_num_threads(before)


def stopped(stop) -> str | None:
    """Why the loop should end now: "stopped" (the stop flag or a cancel), "time budget", or None."""
    if stop is not None and stop.is_set():
        return "stopped"
    b = budget.current()
    if b is not None and b.expired():
        return "stopped" if b.cancelled else "time budget"
    return None


def schedule(steps: int) -> Callable[[int], float]:
    """The learning rate's factor per step: a linear warm-up over the first 10 % (at most 100 steps;
    without it Adam's first big steps can throw the model off), then a cosine down to 10 %."""
    warm = max(1, min(100, steps // 10))

    def factor(i: int) -> float:
        if i < warm:
            return (i + 1) / warm
        done = (i - warm) / max(1, steps - warm)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))

    return factor


def optimizer(model, learning_rate: float) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)


@gpu_task(duration=120)
def train_chunk(bundle: tuple, batches: list, lrs: list[float], loss: Callable,
                stop_key: str | None = None) -> tuple[tuple, list[float]]:
    """A few AdamW steps on (model, optimizer), given the batches, the learning rates and the
    `loss(model, batch)`: a GPU task whose state travels in and out (on ZeroGPU a worker keeps
    nothing, so the caller keeps the bundle it gets back)."""
    model, opt = bundle
    losses = []
    model.train()
    with one_thread():
        for batch, lr in zip(batches, lrs):
            if losses and stops.asked(stop_key):  # Stop, checked per step (backend/runtime/stops.py)
                break
            for group in opt.param_groups:
                group["lr"] = lr
            value = loss(model, batch)
            opt.zero_grad(set_to_none=True)
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(float(value.detach()))
            if not math.isfinite(losses[-1]):
                break
    return (model, opt), losses


@dataclass
class Outcome:
    losses: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    steps_run: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    model: Any = None  # the model as trained so far (a GPU task hands back a new object)


@dataclass(kw_only=True)
class Settings:
    """A run: `steps` AdamW steps of `batch` examples at a peak learning rate, a report of the losses
    every `report_every` steps and an evaluation every `eval_every`; every draw seeded by `seed`. Each
    model adds its own (the tiny GPT's sampling temperature and prompt, the translations shown)."""

    steps: int
    batch: int
    learning_rate: float
    eval_every: int
    seed: int
    report_every: int = 5


def eval_loss(model, loss: Callable, batch) -> float:
    """`loss(model, batch)` in eval mode, without gradients (the model is left in train mode)."""
    model.eval()
    with torch.inference_mode():
        value = float(loss(model, batch))
    model.train()
    return value


def run(model, s: Settings, loss: Callable, draw: Callable[[int], list], evaluate: Callable[[Any, int], dict],
        stop=None, outcome: Outcome | None = None) -> Iterator[dict]:
    """Train, yielding events; `draw(n)` gives the next n batches, `evaluate(model, step)` an eval's
    numbers. `outcome` (filled as it goes) holds the losses and the current model (`outcome.model`)
    even if the caller stops iterating early."""
    out = outcome if outcome is not None else Outcome()
    out.model = model
    bundle = (model, optimizer(model, s.learning_rate))
    factor = schedule(s.steps)
    start = time.perf_counter()
    out.evals.append(evaluate(model, 0))
    yield {"event": "eval", **out.evals[-1]}
    step = 0
    while step < s.steps:
        out.stopped = stopped(stop)
        if out.stopped:
            break
        n = min(s.report_every, s.steps - step, s.eval_every - step % s.eval_every)
        batches = draw(n)
        with stops.named(stop) as key:
            bundle, losses = train_chunk(bundle, batches, [s.learning_rate * factor(step + i) for i in range(n)],
                                         loss, key)
        out.model = bundle[0]
        if not all(math.isfinite(v) for v in losses):
            out.stopped = DIVERGED
            break
        step += len(losses)  # fewer than n after a Stop
        out.losses += [round(v, 4) for v in losses]
        out.steps_run = step
        yield {"event": "step", "step": step, "losses": out.losses[-len(losses):]}
        if (step % s.eval_every == 0 or step == s.steps) and stopped(stop) != "stopped":  # none after Stop
            out.evals.append(evaluate(out.model, step))
            yield {"event": "eval", **out.evals[-1]}
    if not out.stopped and stopped(stop) == "stopped":  # Stop (or a cancel) during the last chunk
        out.stopped = "stopped"
    if out.steps_run and out.evals[-1]["step"] != out.steps_run and out.stopped != "stopped":  # Stop: no final pass
        out.evals.append(evaluate(out.model, out.steps_run))  # the final numbers
        yield {"event": "eval", **out.evals[-1]}
    out.seconds = time.perf_counter() - start
    out.model.eval()
