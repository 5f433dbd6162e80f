"""Fine-tuning the encoder with a classification head, chunk by chunk, stoppable, bounded.

The book's second recipe (ch. 2): the whole encoder trains, with a linear head on the
mean-pooled last hidden state, cross-entropy, AdamW and a linearly decaying learning rate.

ZeroGPU runs a GPU task in a forked worker and keeps nothing it changed. So the training
*state* (weights + AdamW moments, as tensors) lives in the app's process, and a chunk
(`train_chunk`) is stateless: it loads the state into a scratch copy of the encoder, runs a
few seconds of steps on the batches it is given, and returns the new state and the losses.
The loop runs its chunks through a `Worker`: `LocalWorker` on a model it is handed (the hub's
offline builder, tests); the Train tab's worker wraps each chunk in a GPU task that asks the
hub for the model first. Nothing here asks the hub.
Between chunks the loop (`run`, in the app's process) reports progress and live losses,
checks the stop flag and the time budget, evaluates on the validation split at each epoch
end and keeps the best checkpoint so far, so Stop or the budget always leaves a model.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import torch
from torch import nn

from backend.engines.classify import metrics
from backend.engines.embedding.vectors import mean_pool
from backend.runtime import budget as request_budget
from backend.runtime import fixed_work, stops
from backend.runtime.rates import RATES
from backend.engines.classify.finetune_plan import (  # noqa: F401  (the plan is part of this module's API)
    Budget, epoch_order, schedule, GUESSED, GUESS_PER_S, MEASURED, SCORE_WORK, TRAIN_WORK, UNIT_CAP, _steps_that_fit,
    advice, compare, corrected, loop_seconds, plan, rate_key, seconds_for, text_units, MAX_LENGTH,
)

CHUNK_SECONDS = 4.0  # target work per GPU call: progress and Stop every few seconds
FIRST_CHUNK_STEPS = 2  # measured first, to estimate the run before the rest of it starts
EVAL_BATCH = 64
DROPOUT = 0.1  # before the head, in training
WEIGHT_DECAY = 0.01  # AdamW's, on every parameter


class EncoderClassifier(nn.Module):
    """Encoder + dropout + linear head on the mean-pooled last hidden state."""

    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float = DROPOUT):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, n_labels)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
        pooled = mean_pool(hidden, attention_mask)
        return self.head(self.dropout(pooled)), pooled


# ----------------------------------------------------------------------------- the scratch model
# One float32 copy of the encoder + head per process, reused by every chunk (each chunk loads
# its own state first, so whatever the previous chunk left in it does not matter).
_SCRATCH: dict = {}
_SCRATCH_LOCK = threading.Lock()


def _scratch(lm, n_labels: int) -> EncoderClassifier:
    key = (lm.checkpoint, lm.device, id(lm.model), n_labels)
    if _SCRATCH.get("key") != key:
        _SCRATCH.clear()
        encoder = copy.deepcopy(lm.model).float()
        _SCRATCH.update(key=key, model=EncoderClassifier(encoder, n_labels).to(lm.device))
    return _SCRATCH["model"]


def release_scratch() -> None:
    """Free the scratch copy (~90 MB for MiniLM) after a one-off run; a later run rebuilds it."""
    with _SCRATCH_LOCK:
        _SCRATCH.clear()


def _reset(model: EncoderClassifier, lm, seed: int) -> None:
    """Base encoder weights and a freshly seeded head."""
    model.encoder.load_state_dict({k: v.float() for k, v in lm.model.state_dict().items()})
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        bound = 1.0 / math.sqrt(model.head.in_features)
        model.head.weight.copy_(torch.empty_like(model.head.weight, device="cpu").uniform_(-bound, bound, generator=gen))
        model.head.bias.zero_()


def _load(model: EncoderClassifier, lm, state: dict | None, seed: int) -> None:
    if state is None:
        _reset(model, lm, seed)
    else:
        model.load_state_dict(state["model"])


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu")
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_cpu(v) for v in obj]
    return obj


def _encode(tokenizer, texts: list[str], device: str) -> dict:
    enc = tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
    keep = ("input_ids", "attention_mask", "token_type_ids")
    return {k: v.to(device) for k, v in enc.items() if k in keep}


def lr_at(step: int, total_steps: int, lr: float) -> float:
    """Linear decay from `lr` to 0 over the run (the Trainer's default schedule, no warm-up)."""
    return lr * max(0.0, 1.0 - step / max(1, total_steps))


# ----------------------------------------------------------------------------- model work (GPU)
def train_chunk(lm, state: dict | None, batches: list[tuple[list[str], list[int]]], n_labels: int,
                lr: float, step0: int, total_steps: int, seed: int, time_limit_s: float,
                stop_key: str | None = None) -> dict:
    """Some optimiser steps from `state` (None = `lm`'s encoder) -> new state, losses, times; fewer
    steps when `time_limit_s` runs out or the stop flag named `stop_key` is set (checked per step)."""
    with _SCRATCH_LOCK:
        model = _scratch(lm, n_labels)
        _load(model, lm, state, seed)
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=WEIGHT_DECAY)
        if state is not None and state.get("optim"):
            opt.load_state_dict(state["optim"])
        model.train()
        losses, times = [], []
        start = time.perf_counter()
        with torch.enable_grad():
            for i, (texts, ys) in enumerate(batches):
                if i and stops.asked(stop_key):
                    break
                t0 = time.perf_counter()
                torch.manual_seed(seed * 100_003 + step0 + i)  # dropout: same run, same masks
                for group in opt.param_groups:
                    group["lr"] = lr_at(step0 + i, total_steps, lr)
                logits, _ = model(**_encode(lm.tokenizer, texts, lm.device))
                loss = nn.functional.cross_entropy(logits, torch.tensor(ys, device=lm.device))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses.append(float(loss.detach()))
                times.append(time.perf_counter() - t0)
                if time.perf_counter() - start > time_limit_s:
                    break
        model.eval()
        new = {"model": {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()},
               "optim": _to_cpu(opt.state_dict())}
    return {"state": new, "losses": losses, "step_s": times}


def forward_chunk(lm, weights: dict, texts: list[str], n_labels: int,
                  stop_key: str | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Class probabilities and pooled hidden states of `texts` under fine-tuned `weights`; None when
    the stop flag named `stop_key` is set (checked before each batch: a Stop costs at most one)."""
    probs, pooled = np.zeros((len(texts), n_labels)), None
    order = np.argsort([-len(t) for t in texts], kind="stable")
    with _SCRATCH_LOCK:
        model = _scratch(lm, n_labels)
        model.load_state_dict(weights)
        model.eval()
        with torch.inference_mode():
            for s in range(0, len(texts), EVAL_BATCH):
                if stops.asked(stop_key):
                    return None
                idx = order[s:s + EVAL_BATCH]
                logits, pool = model(**_encode(lm.tokenizer, [texts[i] for i in idx], lm.device))
                if pooled is None:
                    pooled = np.zeros((len(texts), pool.shape[1]), dtype=np.float32)
                probs[idx] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
                pooled[idx] = pool.float().cpu().numpy()
    return probs, (pooled if pooled is not None else np.zeros((0, 0), dtype=np.float32))


class LocalWorker:
    """Runs the chunks on a model it is handed, in this process."""

    def __init__(self, lm):
        self.lm = lm
        self.rate_model = lm.checkpoint  # the rates this worker measures are keyed by this name
        self.rate_key = rate_key(TRAIN_WORK, self.rate_model)

    def train_chunk(self, *args) -> dict:
        return train_chunk(self.lm, *args)

    def forward_chunk(self, weights: dict, texts: list[str], n_labels: int, stop_key: str | None = None):
        return forward_chunk(self.lm, weights, texts, n_labels, stop_key)


def predict_proba(worker, weights: dict, texts: list[str], n_labels: int, chunk: int = 512,
                  stop: threading.Event | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Class probabilities and pooled states of `texts`, `chunk` texts per `worker` call. With `stop`:
    None once it is set (or the request is cancelled), checked before each batch of each call."""
    t0, parts = time.perf_counter(), []
    with stops.named(stop) as key:
        extra = {"stop_key": key} if stop is not None else {}  # only a stoppable pass names its flag
        for s in range(0, len(texts), chunk):
            part = None if extra and stops.asked(key) else worker.forward_chunk(
                weights, list(texts[s:s + chunk]), n_labels, **extra)
            if part is None:
                return None
            parts.append(part)
    RATES.add(rate_key(SCORE_WORK, getattr(worker, "rate_model", "")), text_units(texts), time.perf_counter() - t0)
    if not parts:
        return np.zeros((0, n_labels)), np.zeros((0, 0), dtype=np.float32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# ----------------------------------------------------------------------------- the loop (app process)
@dataclass
class Outcome:
    """What a run leaves: the best weights (None if it never stepped) and how it went."""

    weights: dict | None = None
    best_epoch: float | None = None
    best_val: dict | None = None
    losses: list[float] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    stopped: str = "finished"  # finished | stopped | time budget
    steps: int = 0
    total_steps: int = 0
    seconds: float = 0.0
    estimate: dict | None = None  # said after the first chunk, from this run's first steps
    revised: list[float] = field(default_factory=list)  # each later correction of the estimated seconds

    def said_s(self) -> float:
        """The estimated seconds as last said: the latest correction, else the first estimate."""
        return (self.revised or [self.estimate["estimated_s"]])[-1]

    def kept(self, correction: dict | None) -> dict | None:
        """A correction of the estimate (finetune_plan.corrected), remembered as said; None passes through."""
        if correction is not None:
            self.revised.append(correction["estimated_s"])
        return correction
    train_s: float = 0.0  # wall time in training chunks (GPU calls included)
    eval_s: float = 0.0  # wall time in validation passes


def run_fixed(events: Iterator[dict], step, what: str) -> Outcome:
    """`run`'s events to the end, `step(done, total)` after each step -> its Outcome, for a model built
    here by a fixed amount of work: raises (nothing may be cached) unless it ran all its steps."""
    try:
        while True:
            event = next(events)
            if event["event"] == "step":
                step(event["step"], event["total_steps"])
    except StopIteration as done:
        out = done.value
    if out.weights is None or out.steps < out.total_steps:
        raise fixed_work.cut_short(out.steps, out.total_steps, what, out.stopped)
    return out


def _better(val: dict, best: dict | None) -> bool:
    if best is None:
        return True
    return (val["accuracy"], -val["loss"]) > (best["accuracy"], -best["loss"])


def _validation_score(worker, val: list[tuple[str, int]], n_labels: int, stop: threading.Event | None = None):
    """The default checkpoint score: accuracy and mean cross-entropy on the validation split (None
    when `stop` is set during the pass: it is checked before each batch)."""
    texts, ys = [t for t, _ in val], np.array([y for _, y in val])

    def evaluate(weights) -> dict | None:
        probs = (predict_proba(worker, weights, texts, n_labels, stop=stop) or (None,))[0]
        if probs is None:
            return None
        return {"accuracy": round(metrics.accuracy(ys, probs.argmax(1)), 4),
                "loss": round(float(metrics.log_loss_each(probs, ys).mean()), 4)}

    return evaluate


def _deadline(t_start: float, max_seconds: float, outer, reserve_s: float) -> float:
    """The run's own budget, ended `reserve_s` (or 15 %) before the request's, to leave time to score."""
    deadline = t_start + max_seconds
    if outer is not None and outer.deadline != float("inf"):
        left = outer.remaining()
        deadline = min(deadline, t_start + left - max(reserve_s, 0.15 * left))
    return deadline


def _replan(train, val, budget: Budget, worker, res: dict, chunk: list, done: int, done_units: int,
            chunk_s: float, spent_s: float) -> dict:
    """The rest of the loop re-planned at the rate of the first chunk's steps (its first step and
    the chunk's set-up are one-off costs: counted once, not per step)."""
    pure = res["step_s"][1:done]
    pure_units = sum(text_units(texts) for texts, _ in chunk[1:done])
    rate = (pure_units / sum(pure) if pure and sum(pure) > 0
            else done_units / chunk_s if chunk_s > 0 and done_units else None)
    return plan(train, val, budget, getattr(worker, "rate_model", ""), train_per_s=rate,
                basis="measured on this run's first steps", spent_s=spent_s, spent_steps=done,
                spent_units=done_units)


def _check(out: Outcome, evaluate, weights, epoch: float, at_step: int, val_n: int, t_start: float,
           stopped) -> dict | None:
    """Score a checkpoint on validation; the row of the epoch table, and `out`'s best updated (None, and
    nothing kept, when Stop came during the pass)."""
    t0 = time.perf_counter()
    score = evaluate(weights)  # predict_proba measures the scoring rate
    out.eval_s += time.perf_counter() - t0
    if score is None or stopped():
        return None
    row = {"epoch": epoch, "step": at_step, "val_accuracy": score["accuracy"], "val_loss": score["loss"],
           "val_n": val_n, "val_ci95": [round(v, 4) for v in metrics.wilson_interval(
               round(score["accuracy"] * val_n), val_n)],
           "seconds": round(time.perf_counter() - t_start, 2)}
    out.epochs.append(row)
    if _better(score, out.best_val):
        out.weights, out.best_val, out.best_epoch = weights, score, epoch
    return row


def run(train: list[tuple[str, int]], val: list[tuple[str, int]], n_labels: int, budget: Budget,
        worker, stop: threading.Event | None = None, evaluate=None, reserve_s: float = 10.0) -> Iterator[dict]:
    """Fine-tune; yields events ({"event": "estimate" | "step" | "epoch"}) and returns an Outcome.

    `evaluate(weights) -> {"accuracy", "loss", ...}` scores a checkpoint on the validation
    split (default: accuracy and mean cross-entropy of `val`). Inside a request with a time
    budget (backend.runtime.budget) the run also ends `reserve_s` (or 15 %) before that budget, so
    there is time left to score the model, and a cancel of the request stops it like Stop.
    Stop is checked before each step and validation batch (a whole pass takes 9-40 s); no validation
    runs after it: the best scored checkpoint is kept, else the last state, unscored (`best_val` None)."""
    stop = stop or threading.Event()
    evaluate = evaluate or _validation_score(worker, val, n_labels, stop)
    t_start = time.perf_counter()
    outer = request_budget.current()  # the request's own budget (the app's), if any: stop before it
    deadline = _deadline(t_start, budget.max_seconds, outer, reserve_s)
    batches = schedule(len(train), budget)
    per_epoch = math.ceil(len(train) / budget.batch_size)
    out = Outcome(total_steps=len(batches))
    state, step, chunk_steps, last_eval, trained_units = None, 0, FIRST_CHUNK_STEPS, 0, 0

    def stopped() -> bool:
        return stop.is_set() or (outer is not None and outer.cancelled)

    def check(weights, at_step):
        return _check(out, evaluate, weights, round(at_step / per_epoch, 3), at_step, len(val), t_start, stopped)

    while step < len(batches) and not stopped():
        left = deadline - time.perf_counter()
        if left <= 0:
            out.stopped = "time budget"
            break
        epoch_end = (step // per_epoch + 1) * per_epoch
        todo = batches[step:min(step + chunk_steps, epoch_end, len(batches))]
        chunk = [([train[i][0] for i in b], [train[i][1] for i in b]) for b in todo]
        t_chunk = time.perf_counter()
        with stops.named(stop) as key:
            res = worker.train_chunk(state, chunk, n_labels, budget.learning_rate, step, len(batches),
                                     budget.seed, left, key)
        chunk_s = time.perf_counter() - t_chunk  # the whole call: GPU task, state copies, steps
        state, done = res["state"], len(res["losses"])
        step += done
        out.losses += res["losses"]
        out.train_s += chunk_s
        done_units = sum(text_units(texts) for texts, _ in chunk[:done])
        trained_units += done_units
        step_s = chunk_s / max(1, done)
        if out.estimate is None:
            out.estimate = _replan(train, val, budget, worker, res, chunk, done, done_units, chunk_s,
                                   time.perf_counter() - t_start)
            yield {"event": "estimate", **out.estimate}
        elif step < len(batches) and (now := out.kept(corrected(train, val, budget, getattr(worker, "rate_model", ""),
                                                                trained_units, out.train_s, step, out.said_s()))):
            yield {"event": "estimate", **now}
        chunk_steps = max(1, int(CHUNK_SECONDS / max(step_s, 1e-3)))
        yield {"event": "step", "step": step, "total_steps": len(batches),
               "epoch": round(step / per_epoch, 3), "losses": list(res["losses"]),
               "seconds": round(time.perf_counter() - t_start, 2)}
        if not stopped() and (step % per_epoch == 0 or step == len(batches)):
            last_eval, row = step, check(state["model"], step)
            if row is not None:
                yield {"event": "epoch", **row}
        elif done < len(chunk) and not stopped():  # the chunk hit the time budget
            out.stopped = "time budget"
            break
        if stopped():  # also during the chunk or the validation pass (both check it per batch)
            out.stopped = "stopped"
            break
    if out.stopped != "stopped" and state is not None and last_eval != step:  # the budget ended it mid-epoch
        row = check(state["model"], step)  # score what we have
        if row is not None:
            yield {"event": "epoch", **row}
    if stopped() and out.stopped == "finished":
        out.stopped = "stopped"
    if out.weights is None and state is not None:  # stopped before any score: the last state, unscored
        out.stopped, out.weights, out.best_epoch = "stopped", state["model"], round(step / per_epoch, 3)
    out.steps = step
    out.seconds = round(time.perf_counter() - t_start, 2)
    RATES.add(rate_key(TRAIN_WORK, getattr(worker, "rate_model", "")), trained_units, out.train_s)
    out.train_s, out.eval_s = round(out.train_s, 2), round(out.eval_s, 2)
    return out


# ----------------------------------------------------------------------------- a saved classifier
HEAD_FILE = "head.safetensors"


def save_folder(folder, base_encoder: nn.Module, weights: dict, tokenizer, labels: list[str]) -> None:
    """Fine-tuned `weights` as a `save_pretrained` folder: the encoder (its config from
    `base_encoder`), the linear head in `head.safetensors`, the tokenizer and `labels.json`.
    The Train tab's Download and the offline sentiment cache share this layout."""
    import json
    from pathlib import Path

    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    encoder = copy.deepcopy(base_encoder).float().cpu()
    encoder.load_state_dict({k[len("encoder."):]: v for k, v in weights.items() if k.startswith("encoder.")})
    encoder.save_pretrained(folder)
    save_file({k[len("head."):]: v.detach().float().cpu().contiguous() for k, v in weights.items()
               if k.startswith("head.")}, str(folder / HEAD_FILE))
    tokenizer.save_pretrained(folder)
    (folder / "labels.json").write_text(json.dumps(list(labels)))


def load_folder(folder, device: str = "cpu", dtype=torch.float32) -> tuple[EncoderClassifier, object, list[str]]:
    """A folder written by `save_folder` -> (classifier in eval mode, tokenizer, labels)."""
    import json
    from pathlib import Path

    import transformers
    from safetensors.torch import load_file

    folder = Path(folder)
    labels = json.loads((folder / "labels.json").read_text())
    encoder = transformers.AutoModel.from_pretrained(folder, local_files_only=True, dtype=dtype)
    model = EncoderClassifier(encoder, len(labels))
    model.head.load_state_dict(load_file(str(folder / HEAD_FILE)))
    model.to(device=device, dtype=dtype).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return model, tokenizer, labels
