"""Token classification, the book's chapter 4 method: an encoder, dropout and a linear head
per token, fine-tuned end to end on word-level BIO tags.

- `TokenClassifier`: encoder + dropout + linear head. Optionally a small learned word-shape
  embedding (lower / Capitalised / ALLCAPS / digits / punctuation, from the original word) is
  concatenated to each token's hidden state: an uncased encoder never sees capitals, the
  strongest cue for names, and this gives it back.
- `train`: a fixed number of steps (epochs x batches), AdamW with linear decay after a short
  warm-up, the best state by validation entity F1 kept; never "as many steps as fit in N s".
- `predict`: word-level tags read from each word's first piece, with entities and a score per
  entity (the mean softmax probability of its words' tags).
- `save_folder` / `load_folder`: the encoder's `save_pretrained` folder + `head.safetensors` +
  `labels.json` + `ner.json`, like `finetune`'s.
- `ForTokenClassification`: the trained model as transformers' token-classification pipeline
  expects an `AutoModelForTokenClassification` (logits per token, `config.id2label`).
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from backend.engines.ner import data as ner_data, metrics as ner_metrics
from backend.runtime import budget as request_budget

HEAD_FILE = "head.safetensors"
CONFIG_FILE = "ner.json"
EVAL_BATCH = 64

# ----------------------------------------------------------------------------- word shapes
SHAPES = ("none", "lower", "Capitalised", "ALLCAPS", "digit", "punct", "other")


def word_shape(word: str) -> int:
    """The index in SHAPES of a word as written (0 is kept for special tokens and padding)."""
    if any(c.isdigit() for c in word):
        return 4
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return 5
    if all(c.isupper() for c in letters):
        return 3 if len(letters) > 1 else 2
    if word[0].isupper() or (not word[0].isalpha() and letters[0].isupper()):
        return 2
    if all(c.islower() for c in letters):
        return 1
    return 6


def shape_ids_for(word_ids: list[int | None], words: list[str]) -> list[int]:
    """Each token's word shape (0 for special tokens and padding)."""
    return [0 if w is None else word_shape(words[w]) for w in word_ids]


# ----------------------------------------------------------------------------- the model
class TokenClassifier(nn.Module):
    """Encoder + dropout + a linear head per token (+ optional word-shape embeddings: at the head,
    and/or added to the encoder's input so that its layers read capitalisation in context, which
    an uncased tokenizer throws away)."""

    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float = 0.1, shape_dim: int = 0,
                 shape_input: bool = False):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.shape_dim = shape_dim
        self.shapes = nn.Embedding(len(SHAPES), shape_dim) if shape_dim else None
        self.shape_in = nn.Embedding(len(SHAPES), encoder.config.hidden_size) if shape_input else None
        if self.shape_in is not None:
            nn.init.zeros_(self.shape_in.weight)  # starts as the pretrained encoder exactly
        self.head = nn.Linear(encoder.config.hidden_size + shape_dim, n_labels)

    @property
    def uses_shapes(self) -> bool:
        return self.shapes is not None or self.shape_in is not None

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, shape_ids=None):
        kwargs = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
        if self.uses_shapes and shape_ids is None:
            shape_ids = torch.zeros_like(input_ids)
        if self.shape_in is not None:
            embeds = self.encoder.get_input_embeddings()(input_ids) + self.shape_in(shape_ids)
            hidden = self.encoder(inputs_embeds=embeds, attention_mask=attention_mask, **kwargs).last_hidden_state
        else:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **kwargs).last_hidden_state
        if self.shapes is not None:
            hidden = torch.cat([hidden, self.shapes(shape_ids).to(hidden.dtype)], dim=-1)
        return self.head(self.dropout(hidden))


def new_model(encoder: nn.Module, n_labels: int, seed: int = 0, dropout: float = 0.1,
              shape_dim: int = 0, shape_input: bool = False) -> TokenClassifier:
    """A float32 copy of `encoder` with a freshly seeded head (the base model is not touched)."""
    enc = copy.deepcopy(encoder).float()
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = TokenClassifier(enc, n_labels, dropout, shape_dim, shape_input)
    torch.random.set_rng_state(gen_state)
    return model


# ----------------------------------------------------------------------------- batches
def _device_of(model: nn.Module):
    return next(model.parameters()).device


def make_batch(tokenizer, sentences: list[list[str]], label2id: dict | None = None,
               tags: list[list[str]] | None = None, max_length: int = 128, shapes: bool = False,
               device="cpu") -> tuple[dict, list[list[int | None]]]:
    """Model inputs for pre-split sentences (+ `labels` aligned to first pieces when `tags`
    are given, + `shape_ids` when `shapes`), and each row's word_ids."""
    enc, word_ids = ner_data.encode(tokenizer, sentences, max_length)
    batch = {k: enc[k].to(device) for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
    width = batch["input_ids"].shape[1]
    if tags is not None:
        rows = [ner_data.align_labels(w, [label2id[t] for t in tg]) for w, tg in zip(word_ids, tags)]
        batch["labels"] = torch.tensor([r + [ner_data.IGNORE] * (width - len(r)) for r in rows], device=device)
    if shapes:
        rows = [shape_ids_for(w, s) for w, s in zip(word_ids, sentences)]
        batch["shape_ids"] = torch.tensor([r + [0] * (width - len(r)) for r in rows], device=device)
    return batch, word_ids


def _forward(model: TokenClassifier, batch: dict):
    return model(batch["input_ids"], batch.get("attention_mask"), batch.get("token_type_ids"),
                 batch.get("shape_ids"))


# ----------------------------------------------------------------------------- training
@dataclass(frozen=True)
class Recipe:
    """A fixed amount of training work: epochs x ceil(train / batch_size) steps. (The reader's Recipe,
    qa/reader.py, is alike in shape only: other fields and defaults, each hashed into its own cache key.)"""

    epochs: int = 8
    batch_size: int = 16
    learning_rate: float = 1e-4
    weight_decay: float = 0.01
    warmup: float = 0.1  # fraction of the steps with a linear warm-up, then linear decay to 0
    dropout: float = 0.1
    shape_dim: int = 0  # 0: the book's plain head; > 0: the word-shape embedding's size
    shape_input: bool = False  # word shapes added to the encoder's input embeddings too
    head_lr_scale: float = 1.0  # the head's (and shape embedding's) learning rate / the encoder's
    freeze_word_embeddings: bool = True  # the 30k x 384 table: most of the update's cost, little to learn
    max_length: int = 128
    seed: int = 0

    def steps(self, n_train: int) -> int:
        return self.epochs * math.ceil(n_train / self.batch_size)


def lr_factor(step: int, total: int, warmup: float) -> float:
    """Linear warm-up over `warmup * total` steps, then linear decay to 0 at `total`."""
    w = int(round(warmup * total))
    if step < w:
        return (step + 1) / w
    return max(0.0, (total - step) / max(1, total - w))


def schedule(n: int, batch_size: int, epochs: int, seed: int) -> list[list[int]]:
    """Each epoch's shuffled order cut into batches: the same batches for the same seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        out += [order[i:i + batch_size] for i in range(0, n, batch_size)]
    return out


def optimizer_for(model: TokenClassifier, recipe: Recipe) -> torch.optim.AdamW:
    """AdamW, no decay on biases and LayerNorm weights (the Trainer's grouping)."""
    groups: dict = {}
    for name, p in model.named_parameters():
        if recipe.freeze_word_embeddings and "word_embeddings" in name:
            p.requires_grad_(False)
        if not p.requires_grad:
            continue
        lr = recipe.learning_rate * (1.0 if name.startswith("encoder.") else recipe.head_lr_scale)
        wd = 0.0 if (p.ndim < 2 or "LayerNorm" in name or "norm" in name.lower()) else recipe.weight_decay
        groups.setdefault((lr, wd), []).append(p)
    return torch.optim.AdamW([{"params": ps, "lr": lr, "weight_decay": wd, "initial_lr": lr}
                              for (lr, wd), ps in groups.items()], lr=recipe.learning_rate)


class Stopped(Exception):
    """Raised by `train` and `evaluate` when their `should_stop` says so (checked before each batch)."""


def _halt_if(should_stop: Callable[[], bool] | None) -> None:
    if should_stop is not None and should_stop():
        raise Stopped


@dataclass
class Outcome:
    weights: dict  # the best state (by validation F1), on the CPU
    steps: int
    total_steps: int
    best_step: int
    best_val: dict  # ner_metrics.report of the best state on validation
    seconds: float
    step_seconds: float  # mean wall time of a training step (forward, backward, update)
    losses: list[float] = field(default_factory=list)  # training loss per step
    evals: list[dict] = field(default_factory=list)  # {step, f1} per validation
    stopped: bool = False  # `keep_on_stop` and a stop ended the run before its last step


def train(model: TokenClassifier, tokenizer, train_set: list[ner_data.Sentence],
          val_set: list[ner_data.Sentence], labels: list[str], recipe: Recipe,
          progress: Callable[[int, int, float], None] | None = None, evals_per_epoch: int = 1,
          should_stop: Callable[[], bool] | None = None, max_steps: int | None = None,
          keep_on_stop: bool = False) -> Outcome:
    """Fine-tune `model` in place for `recipe.steps(len(train_set))` steps (at most `max_steps`); keep
    the state with the best validation entity F1 (checked `evals_per_epoch` times an epoch and at the
    end) and load it back into `model`. Stops early when the request's budget says so, or raises
    `Stopped` when `should_stop()` does (asked before each step and each validation batch). With
    `keep_on_stop` a stop before a step ends the loop instead: the model keeps the state trained so far
    (a learner's live run shows what it got to), `Outcome.stopped` is set and validation is not cut short."""
    label2id = {l: i for i, l in enumerate(labels)}
    device = _device_of(model)
    shapes = model.uses_shapes
    batches = schedule(len(train_set), recipe.batch_size, recipe.epochs, recipe.seed)[:max_steps]
    total = len(batches)
    per_epoch = math.ceil(len(train_set) / recipe.batch_size)
    eval_at = {min(total, round((e * per_epoch) + per_epoch * k / evals_per_epoch))
               for e in range(recipe.epochs) for k in range(1, evals_per_epoch + 1)}
    opt = optimizer_for(model, recipe)
    loss_fn = nn.CrossEntropyLoss(ignore_index=ner_data.IGNORE)
    torch.manual_seed(recipe.seed)
    best, best_f1, best_step, best_val = None, -1.0, 0, {}
    losses, evals, step_time, stopped = [], [], 0.0, False
    val_stop = None if keep_on_stop else should_stop
    t0 = time.perf_counter()
    model.train()
    for step, idx in enumerate(batches):
        if keep_on_stop and should_stop is not None and should_stop():
            stopped = True
            break
        request_budget.check(f"trained {step} of {total} steps")
        _halt_if(None if keep_on_stop else should_stop)
        ts = time.perf_counter()
        batch, _ = make_batch(tokenizer, [train_set[i].tokens for i in idx], label2id,
                              [train_set[i].tags for i in idx], recipe.max_length, shapes, device)
        factor = lr_factor(step, total, recipe.warmup)
        for g in opt.param_groups:
            g["lr"] = g["initial_lr"] * factor
        logits = _forward(model, batch)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]).float(), batch["labels"].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_time += time.perf_counter() - ts
        losses.append(float(loss.detach()))
        if step + 1 in eval_at:
            rep = evaluate(model, tokenizer, val_set, labels, recipe.max_length, val_stop)["report"]
            model.train()
            f = rep["overall"]["f1"]
            evals.append({"step": step + 1, "f1": f})
            if f > best_f1:
                best_f1, best_step, best_val = f, step + 1, rep
                best = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        if progress is not None:
            progress(step + 1, total, losses[-1])
    done = len(losses)
    if stopped:  # what was trained so far, not an earlier best
        best, best_step = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}, done
    model.load_state_dict(best)
    model.eval()
    return Outcome(best, done, total, best_step, best_val, time.perf_counter() - t0,
                   step_time / max(1, done), losses, evals, stopped)


# ----------------------------------------------------------------------------- prediction
def _word_probs(model: TokenClassifier, tokenizer, sentences: list[list[str]], max_length: int,
                should_stop: Callable[[], bool] | None = None):
    """(per-sentence arrays of shape (words, labels) of softmax probabilities from the first
    pieces, in float32; a word without a piece gets a certain O). `Stopped` if `should_stop()` before a batch."""
    device = _device_of(model)
    shapes = model.uses_shapes
    out: list[np.ndarray] = [None] * len(sentences)
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    with torch.inference_mode():
        for start in range(0, len(order), EVAL_BATCH):
            _halt_if(should_stop)
            idx = order[start:start + EVAL_BATCH]
            batch, word_ids = make_batch(tokenizer, [sentences[i] for i in idx], max_length=max_length,
                                         shapes=shapes, device=device)
            probs = _forward(model, batch).float().softmax(-1).cpu().numpy()
            for row, i in enumerate(idx):
                # A word without a piece (past the window, or a combining mark the tokenizer strips):
                # tagged O with certainty, in its own place, so the words after it keep theirs.
                p = np.zeros((len(sentences[i]), probs.shape[-1]), dtype=np.float32)
                p[:, 0] = 1.0
                for w, pos in enumerate(ner_data.first_pieces(word_ids[row], len(sentences[i]))):
                    if pos is not None:
                        p[w] = probs[row, pos]
                out[i] = p
    return out


def _entities_with_scores(words: list[str], tags: list[str], probs: np.ndarray, how: str = "mean") -> list[dict]:
    rows = []
    for type_, s, e in ner_metrics.entities(tags):
        tag_p = probs[np.arange(s, e + 1), :].max(axis=-1)
        score = float(tag_p.mean() if how == "mean" else tag_p.min())
        rows.append({"type": type_, "start": s, "end": e + 1, "text": " ".join(words[s:e + 1]), "score": score})
    return rows


def predict(model: TokenClassifier, tokenizer, sentences: list[list[str]], labels: list[str],
            max_length: int = 128, score: str = "mean") -> list[dict]:
    """Per sentence: {"tokens", "tags" (one per word), "entities": [{type, start, end (exclusive),
    text, score}]}; an entity's score is the mean (or `score="min"`) of its words' top probabilities."""
    model.eval()
    out = []
    for words, p in zip(sentences, _word_probs(model, tokenizer, sentences, max_length)):
        tags = [labels[int(k)] for k in p.argmax(-1)]
        out.append({"tokens": list(words), "tags": tags, "entities": _entities_with_scores(words, tags, p, score)})
    return out


def evaluate(model: TokenClassifier, tokenizer, sentences: list[ner_data.Sentence], labels: list[str],
             max_length: int = 128, should_stop: Callable[[], bool] | None = None) -> dict:
    """{"report": ner_metrics.report, "pred": tags per sentence, "losses": mean word loss per sentence}
    (`Stopped` when `should_stop()` says so before a batch)."""
    model.eval()
    pos = {l: i for i, l in enumerate(labels)}
    probs = _word_probs(model, tokenizer, [s.tokens for s in sentences], max_length, should_stop)
    pred = [[labels[int(k)] for k in p.argmax(-1)] for p in probs]
    losses = [float(-np.log(np.clip(p[np.arange(len(s.tags)), [pos.get(t, 0) for t in s.tags]], 1e-12, 1)).mean())
              for p, s in zip(probs, sentences)]
    return {"report": ner_metrics.report([s.tags for s in sentences], pred), "pred": pred, "losses": losses}


# ----------------------------------------------------------------------------- save / load
def save_folder(folder, model: TokenClassifier, tokenizer, labels: list[str], recipe: Recipe | None = None) -> None:
    """The trained model as a folder: the encoder's `save_pretrained`, the head (and shape
    embedding) in `head.safetensors`, the tokenizer, `labels.json` and `ner.json`."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    encoder = copy.deepcopy(model.encoder).float().cpu()
    encoder.save_pretrained(folder)
    save_file({k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()
               if not k.startswith("encoder.")}, str(folder / HEAD_FILE))
    tokenizer.save_pretrained(folder)
    (folder / "labels.json").write_text(json.dumps(list(labels)))
    (folder / CONFIG_FILE).write_text(json.dumps({"shape_dim": model.shape_dim, "shape_input": model.shape_in is not None, "dropout": model.dropout.p,
                                                  "recipe": asdict(recipe) if recipe else None}, indent=1))


def load_folder(folder, device: str = "cpu", dtype=torch.float32) -> tuple[TokenClassifier, object, list[str]]:
    """A folder written by `save_folder` -> (model in eval mode, tokenizer, labels)."""
    import transformers
    from safetensors.torch import load_file

    folder = Path(folder)
    labels = json.loads((folder / "labels.json").read_text())
    cfg = json.loads((folder / CONFIG_FILE).read_text())
    encoder = transformers.AutoModel.from_pretrained(folder, local_files_only=True, dtype=dtype)
    model = TokenClassifier(encoder, len(labels), cfg.get("dropout", 0.1), cfg.get("shape_dim", 0),
                            cfg.get("shape_input", False))
    missing, unexpected = model.load_state_dict(load_file(str(folder / HEAD_FILE)), strict=False)
    if unexpected or any(not k.startswith("encoder.") for k in missing):
        raise ValueError(f"{folder}: head weights do not match (missing {missing}, unexpected {unexpected})")
    model.to(device=device, dtype=dtype).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return model, tokenizer, labels
