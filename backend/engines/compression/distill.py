"""Knowledge distillation (the book's chapter 8): a smaller student taught by a fine-tuned teacher.

The student starts from some of the teacher's own layers (its embeddings, the chosen encoder
layers and its head), as DistilBERT starts from every other layer of BERT, and is trained on
the loss of the book's `DistillationTrainer`:

    loss = alpha * CE(student, hard labels) + (1 - alpha) * T^2 * KL(softmax(teacher/T) || softmax(student/T))

The teacher's logits are computed once per training text (eval mode: no dropout) and reused
every epoch, so a trial costs the student's steps alone. `train_student` runs a fixed number
of epochs on a model it is handed, stops on `stop()` between steps, and keeps the epoch that
scores best on the validation split. Nothing here asks the hub.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import nn

from backend.engines.classify.finetune import EncoderClassifier, epoch_order, lr_at

EVAL_BATCH = 64
MAX_LENGTH = 128


def distillation_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, labels: torch.Tensor,
                      temperature: float, alpha: float) -> torch.Tensor:
    """The DistillationTrainer's loss: alpha * CE on the hard labels + (1 - alpha) * T^2 * KL
    of the softened distributions (batch mean); the T^2 keeps the soft gradients' scale."""
    ce = nn.functional.cross_entropy(student_logits, labels)
    kl = nn.functional.kl_div(nn.functional.log_softmax(student_logits / temperature, dim=-1),
                              nn.functional.softmax(teacher_logits / temperature, dim=-1),
                              reduction="batchmean")
    return alpha * ce + (1.0 - alpha) * temperature ** 2 * kl


def student_from(teacher: EncoderClassifier, layers: list[int]) -> EncoderClassifier:
    """A copy of `teacher` that keeps only the encoder layers `layers` (in order): same
    embeddings, same head, a shallower encoder; the teacher is left as it was."""
    n = teacher.encoder.config.num_hidden_layers
    if not layers or len(set(layers)) != len(layers) or any(not 0 <= i < n for i in layers):
        raise ValueError(f"student layers must be distinct indices in 0..{n - 1}, got {layers}")
    student = copy.deepcopy(teacher).float().cpu()
    kept = nn.ModuleList([student.encoder.encoder.layer[i] for i in sorted(layers)])
    student.encoder.encoder.layer = kept
    student.encoder.config.num_hidden_layers = len(kept)
    for i, layer in enumerate(kept):  # transformers' layers know their own index (caches)
        attn = getattr(getattr(layer, "attention", None), "self", None)
        if attn is not None and hasattr(attn, "layer_idx"):
            attn.layer_idx = i
    return student.eval()


def spread_layers(n: int, total: int = 6) -> tuple[int, ...]:
    """`n` of the teacher's `total` layers, spread evenly and keeping the first and the last
    (2 of 6: 0 and 5; 3 of 6: 0, 2, 5); 1 keeps the first."""
    if not 1 <= n <= total:
        raise ValueError(f"a student keeps 1 to {total} layers, got {n}")
    if n == 1:
        return (0,)
    return tuple(sorted({round(i * (total - 1) / (n - 1)) for i in range(n)}))


def encode(tokenizer, texts: list[str]) -> dict:
    enc = tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
    return {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


def logits_of(model: nn.Module, tokenizer, texts: list[str],
              on_batch: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Logits of `texts` (batches sorted by length), in the texts' order; `on_batch(done, total)` after each
    batch (a caller's progress and stop check)."""
    out = np.zeros((len(texts), model.head.out_features), dtype=np.float32)
    order = np.argsort([-len(t) for t in texts], kind="stable")
    model.eval()
    with torch.inference_mode():
        for s in range(0, len(texts), EVAL_BATCH):
            idx = order[s:s + EVAL_BATCH]
            logits, _ = model(**encode(tokenizer, [texts[i] for i in idx]))
            out[idx] = logits.float().numpy()
            if on_batch is not None:
                on_batch(min(s + EVAL_BATCH, len(texts)), len(texts))
    return out


@dataclass
class Settings:
    """A student's distillation (alike finetune.Budget in shape only: no time or example cap, and it
    is part of the chapter 8 default run's cache key, so its fields stay as they are)."""

    temperature: float = 2.0
    alpha: float = 0.5
    layers: tuple[int, ...] = (0, 2, 4)
    epochs: int = 6
    learning_rate: float = 1e-4
    batch_size: int = 16
    seed: int = 0


@dataclass
class Result:
    weights: dict | None
    best_epoch: int | None
    val_accuracy: float
    history: list[dict] = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    stopped: str = "finished"


def _accuracy(model, tokenizer, data: list[tuple[str, int]]) -> float:
    pred = logits_of(model, tokenizer, [t for t, _ in data]).argmax(1)
    return float(np.mean(pred == np.array([y for _, y in data]))) if data else 0.0


def train_student(teacher: EncoderClassifier, tokenizer, train: list[tuple[str, int]], val: list[tuple[str, int]],
                  settings: Settings, teacher_logits: np.ndarray | None = None,
                  stop: Callable[[], bool] = lambda: False,
                  on_step: Callable[[int, int], None] | None = None) -> tuple[EncoderClassifier, Result]:
    """Distil `teacher` into a student of `settings.layers`; -> (student with its best epoch's
    weights, what happened). `teacher_logits` (train order) saves the teacher's forward passes."""
    t0 = time.perf_counter()
    if teacher_logits is None:
        teacher_logits = logits_of(teacher, tokenizer, [t for t, _ in train])
    student = student_from(teacher, list(settings.layers))
    opt = torch.optim.AdamW(student.parameters(), lr=settings.learning_rate, weight_decay=0.01)
    per_epoch = -(-len(train) // settings.batch_size)
    total = per_epoch * settings.epochs
    res = Result(weights=None, best_epoch=None, val_accuracy=-1.0)
    step = 0
    for epoch in range(settings.epochs):
        order = epoch_order(len(train), settings.seed, epoch)
        student.train()
        with torch.enable_grad():
            for s in range(0, len(order), settings.batch_size):
                if stop():
                    res.stopped = "stopped"
                    break
                idx = order[s:s + settings.batch_size]
                torch.manual_seed(settings.seed * 100_003 + step)
                for group in opt.param_groups:
                    group["lr"] = lr_at(step, total, settings.learning_rate)
                logits, _ = student(**encode(tokenizer, [train[i][0] for i in idx]))
                loss = distillation_loss(logits, torch.from_numpy(teacher_logits[idx]),
                                         torch.tensor([train[i][1] for i in idx]), settings.temperature, settings.alpha)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                step += 1
                if on_step is not None:
                    on_step(step, total)
        acc = _accuracy(student, tokenizer, val)
        res.history.append({"epoch": epoch + 1, "step": step, "val_accuracy": round(acc, 4)})
        if acc > res.val_accuracy:
            res.val_accuracy, res.best_epoch = acc, epoch + 1
            res.weights = {k: v.detach().clone() for k, v in student.state_dict().items()}
        if res.stopped != "finished":
            break
    if res.weights is not None:
        student.load_state_dict(res.weights)
    res.steps, res.seconds = step, round(time.perf_counter() - t0, 2)
    return student.eval(), res


def grid(temperatures, alphas) -> list[tuple[float, float]]:
    """The search's trials, in order: every (T, alpha) pair."""
    return [(float(t), float(a)) for t in temperatures for a in alphas]
