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
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import torch
from torch import nn

from backend.engines import classification_metrics as metrics
from backend.engines.embedding import mean_pool
from backend.runtime import budget as request_budget
from backend.runtime.rates import RATES

MAX_LENGTH = 128  # tokens per text while training (the sets' sentences are far shorter)
CHUNK_SECONDS = 4.0  # target work per GPU call: progress and Stop every few seconds
FIRST_CHUNK_STEPS = 2  # measured first, to estimate the run before the rest of it starts
EVAL_BATCH = 64


class EncoderClassifier(nn.Module):
    """Encoder + dropout + linear head on the mean-pooled last hidden state."""

    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float = 0.1):
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
                lr: float, step0: int, total_steps: int, seed: int, time_limit_s: float) -> dict:
    """Some optimiser steps from `state` (None = `lm`'s encoder) -> new state, losses, times."""
    with _SCRATCH_LOCK:
        model = _scratch(lm, n_labels)
        _load(model, lm, state, seed)
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        if state is not None and state.get("optim"):
            opt.load_state_dict(state["optim"])
        model.train()
        losses, times = [], []
        start = time.perf_counter()
        with torch.enable_grad():
            for i, (texts, ys) in enumerate(batches):
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


def forward_chunk(lm, weights: dict, texts: list[str], n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Class probabilities and pooled hidden states of `texts` under fine-tuned `weights`."""
    probs, pooled = np.zeros((len(texts), n_labels)), None
    order = np.argsort([-len(t) for t in texts], kind="stable")
    with _SCRATCH_LOCK:
        model = _scratch(lm, n_labels)
        model.load_state_dict(weights)
        model.eval()
        with torch.inference_mode():
            for s in range(0, len(texts), EVAL_BATCH):
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

    def forward_chunk(self, weights: dict, texts: list[str], n_labels: int) -> tuple[np.ndarray, np.ndarray]:
        return forward_chunk(self.lm, weights, texts, n_labels)


def predict_proba(worker, weights: dict, texts: list[str], n_labels: int,
                  chunk: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Class probabilities and pooled states of `texts`, `chunk` texts per `worker` call."""
    t0 = time.perf_counter()
    parts = [worker.forward_chunk(weights, list(texts[s:s + chunk]), n_labels)
             for s in range(0, len(texts), chunk)]
    RATES.add(rate_key(SCORE_WORK, getattr(worker, "rate_model", "")), text_units(texts), time.perf_counter() - t0)
    if not parts:
        return np.zeros((0, n_labels)), np.zeros((0, 0), dtype=np.float32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# ----------------------------------------------------------------------------- the loop (app process)
@dataclass
class Budget:
    epochs: int = 3
    max_examples: int = 2000
    max_seconds: float = 60.0
    learning_rate: float = 1e-4
    batch_size: int = 16
    seed: int = 0


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
    estimate: dict | None = None
    train_s: float = 0.0  # wall time in training chunks (GPU calls included)
    eval_s: float = 0.0  # wall time in validation passes


def schedule(n: int, budget: Budget) -> list[list[int]]:
    """Batches of example indices for every epoch, shuffled per epoch with a fixed seed."""
    out = []
    for epoch in range(budget.epochs):
        order = list(range(n))
        random.Random(budget.seed * 1000 + epoch).shuffle(order)
        out += [order[s:s + budget.batch_size] for s in range(0, n, budget.batch_size)]
    return out


def _better(val: dict, best: dict | None) -> bool:
    if best is None:
        return True
    return (val["accuracy"], -val["loss"]) > (best["accuracy"], -best["loss"])


def _validation_score(worker, val: list[tuple[str, int]], n_labels: int):
    """The default checkpoint score: accuracy and mean cross-entropy on the validation split."""
    from backend.engines import classification_metrics as metrics

    texts, ys = [t for t, _ in val], np.array([y for _, y in val])

    def evaluate(weights) -> dict:
        probs, _ = predict_proba(worker, weights, texts, n_labels)
        return {"accuracy": round(metrics.accuracy(ys, probs.argmax(1)), 4),
                "loss": round(float(metrics.log_loss_each(probs, ys).mean()), 4)}

    return evaluate


def run(train: list[tuple[str, int]], val: list[tuple[str, int]], n_labels: int, budget: Budget,
        worker, stop: threading.Event | None = None, evaluate=None, reserve_s: float = 10.0) -> Iterator[dict]:
    """Fine-tune; yields events ({"event": "estimate" | "step" | "epoch"}) and returns an Outcome.

    `evaluate(weights) -> {"accuracy", "loss", ...}` scores a checkpoint on the validation
    split (default: accuracy and mean cross-entropy of `val`). Inside a request with a time
    budget (backend.runtime.budget) the run also ends `reserve_s` (or 15 %) before that budget, so
    there is time left to score the model, and a cancel of the request stops it like Stop."""
    evaluate = evaluate or _validation_score(worker, val, n_labels)
    stop = stop or threading.Event()
    t_start = time.perf_counter()
    deadline = t_start + budget.max_seconds
    outer = request_budget.current()  # the request's own budget (the app's), if any: stop before it
    if outer is not None and outer.deadline != float("inf"):
        left = outer.remaining()
        deadline = min(deadline, t_start + left - max(reserve_s, 0.15 * left))
    batches = schedule(len(train), budget)
    per_epoch = math.ceil(len(train) / budget.batch_size)
    out = Outcome(total_steps=len(batches))
    state, step, chunk_steps, last_eval, trained_units = None, 0, FIRST_CHUNK_STEPS, 0, 0

    def check(weights, at_step):
        t0 = time.perf_counter()
        score = evaluate(weights)  # predict_proba measures the scoring rate
        out.eval_s += time.perf_counter() - t0
        epoch = round(at_step / per_epoch, 3)
        row = {"epoch": epoch, "step": at_step, "val_accuracy": score["accuracy"], "val_loss": score["loss"],
               "val_n": len(val), "val_ci95": [round(v, 4) for v in metrics.wilson_interval(
                   round(score["accuracy"] * len(val)), len(val))],
               "seconds": round(time.perf_counter() - t_start, 2)}
        out.epochs.append(row)
        if _better(score, out.best_val):
            out.weights, out.best_val, out.best_epoch = weights, score, epoch
        return row

    while step < len(batches):
        if stop.is_set() or (outer is not None and outer.cancelled):
            out.stopped = "stopped"
            break
        left = deadline - time.perf_counter()
        if left <= 0:
            out.stopped = "time budget"
            break
        epoch_end = (step // per_epoch + 1) * per_epoch
        todo = batches[step:min(step + chunk_steps, epoch_end, len(batches))]
        chunk = [([train[i][0] for i in b], [train[i][1] for i in b]) for b in todo]
        t_chunk = time.perf_counter()
        res = worker.train_chunk(state, chunk, n_labels, budget.learning_rate, step, len(batches),
                                 budget.seed, left)
        chunk_s = time.perf_counter() - t_chunk  # the whole call: GPU task, state copies, steps
        state, done = res["state"], len(res["losses"])
        step += done
        out.losses += res["losses"]
        out.train_s += chunk_s
        done_units = sum(text_units(texts) for texts, _ in chunk[:done])
        trained_units += done_units
        step_s = chunk_s / max(1, done)
        if out.estimate is None:
            # The rest of the loop re-planned at the rate of this first chunk's steps (its first
            # step and the chunk's set-up are one-off costs: they are counted once, not per step).
            pure = res["step_s"][1:done]
            pure_units = sum(text_units(texts) for texts, _ in chunk[1:done])
            rate = (pure_units / sum(pure) if pure and sum(pure) > 0
                    else done_units / chunk_s if chunk_s > 0 and done_units else None)
            out.estimate = plan(train, val, budget, getattr(worker, "rate_model", ""), train_per_s=rate,
                                basis="measured on this run's first steps",
                                spent_s=time.perf_counter() - t_start, spent_steps=done, spent_units=done_units)
            yield {"event": "estimate", **out.estimate}
        chunk_steps = max(1, int(CHUNK_SECONDS / max(step_s, 1e-3)))
        yield {"event": "step", "step": step, "total_steps": len(batches),
               "epoch": round(step / per_epoch, 3), "losses": list(res["losses"]),
               "seconds": round(time.perf_counter() - t_start, 2)}
        if step % per_epoch == 0 or step == len(batches):
            last_eval = step
            yield {"event": "epoch", **check(state["model"], step)}
        elif done < len(chunk):  # the chunk hit the time budget
            out.stopped = "time budget"
            break
    if state is not None and last_eval != step:  # stopped mid-epoch: score what we have
        yield {"event": "epoch", **check(state["model"], step)}
    out.steps = step
    out.seconds = round(time.perf_counter() - t_start, 2)
    RATES.add(rate_key(TRAIN_WORK, getattr(worker, "rate_model", "")), trained_units, out.train_s)
    out.train_s, out.eval_s = round(out.train_s, 2), round(out.eval_s, 2)
    return out


# ----------------------------------------------------------------------------- estimates
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


def plan(train: list, val: list, budget: Budget, model: str = "", train_per_s: float | None = None,
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


def advice(p: dict, budget: Budget, n: int) -> str:
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
