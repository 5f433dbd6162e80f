"""Cross-lingual transfer, the book's chapter 4 experiment: fine-tune a multilingual encoder for
NER on some languages, score entity F1 on every language's test set.

The training itself is `token_classification.train` (encoder + dropout + a linear head per
token, first sub-word piece labelled); what this adds is what the CPU cannot afford and the
grid: the embeddings (250,037 x 384, most of the weights) and the lower layers are frozen, only
the top `train_layers` layers and the head learn, for a fixed number of steps per run. A run's
learned part (top layers + head, a few MB) is all that is saved: the frozen rest is the base.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Callable

import torch

from backend.engines.ner import data as ner_data, metrics as ner_metrics
from backend.engines.ner import token_classification as tc

MAX_LENGTH = 96  # a tagged sentence's window in word pieces: a longer sentence is cut there


@dataclass(frozen=True)
class TransferRecipe:
    """A fixed amount of work per run: `steps` batches of `batch_size` (as many epochs as hold them, the
    last one cut at `steps`)."""

    train_layers: int = 4  # the top encoder layers that learn; the embeddings and the rest are frozen
    steps: int = 120
    batch_size: int = 16
    learning_rate: float = 3e-4
    head_lr_scale: float = 10.0
    max_length: int = MAX_LENGTH
    seed: int = 0

    def recipe(self, n_train: int) -> tc.Recipe:
        epochs = max(1, math.ceil(self.steps / math.ceil(n_train / self.batch_size)))
        return tc.Recipe(epochs=epochs, batch_size=self.batch_size, learning_rate=self.learning_rate,
                         head_lr_scale=self.head_lr_scale, max_length=self.max_length, seed=self.seed)


def freeze(model: tc.TokenClassifier, train_layers: int) -> dict:
    """Freeze the embeddings and all but the top `train_layers` encoder layers; -> what is frozen."""
    layers = model.encoder.encoder.layer
    keep = max(0, min(train_layers, len(layers)))
    first = len(layers) - keep
    for name, p in model.encoder.named_parameters():
        trainable = name.startswith("encoder.layer.") and int(name.split(".")[2]) >= first
        p.requires_grad_(trainable)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"frozen": f"the embeddings and encoder layers 0-{first - 1}" if first else "the embeddings",
            "trained": f"encoder layers {first}-{len(layers) - 1} and the token head",
            "frozen_params": frozen, "trained_params": trained, "layers": len(layers), "train_layers": keep}


def learned_state(model: tc.TokenClassifier) -> dict[str, torch.Tensor]:
    """The parameters a run changed (top layers + head), on the CPU."""
    return {k: p.detach().cpu().clone() for k, p in model.named_parameters() if p.requires_grad}


def errors_by_type(gold: list[list[str]], pred: list[list[str]]) -> dict[str, dict]:
    """Per entity type: entities found, missed (no predicted entity with its span and type), spurious,
    and missed ones predicted with the right span but another type."""
    out: dict[str, dict] = {}
    for g, p in zip(gold, pred):
        ge, pe = set(ner_metrics.entities(g)), set(ner_metrics.entities(p))
        spans = {(s, e): t for t, s, e in pe}
        for t, s, e in ge:
            row = out.setdefault(t, {"found": 0, "missed": 0, "spurious": 0, "wrong_type": 0})
            if (t, s, e) in pe:
                row["found"] += 1
            else:
                row["missed"] += 1
                row["wrong_type"] += int((s, e) in spans)
        for t, s, e in pe - ge:
            out.setdefault(t, {"found": 0, "missed": 0, "spurious": 0, "wrong_type": 0})["spurious"] += 1
    return out


def run(encoder, tokenizer, train_sets: dict[str, list], val_sets: dict[str, list], test_sets: dict[str, list],
        labels: list[str], recipe: TransferRecipe,
        progress: Callable[[int, int, float], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        keep_on_stop: bool = False) -> tuple[tc.TokenClassifier, dict]:
    """Fine-tune a copy of `encoder` on the union of `train_sets` (language -> sentences) for exactly
    `recipe.steps` steps, keep the best state on the union of their validation sets, score entity F1 on
    each of `test_sets`. `keep_on_stop` (a learner's live run): a stop ends training with what it has
    learned so far, which is still scored on every test set (`meta["stopped"]`)."""
    t0 = time.perf_counter()
    train = [s for lang in train_sets for s in train_sets[lang]]
    val = [s for lang in train_sets for s in val_sets.get(lang, [])]
    model = tc.new_model(encoder, len(labels), recipe.seed)
    model.to(next(encoder.parameters()).device)
    frozen = freeze(model, recipe.train_layers)
    plan = recipe.recipe(len(train))
    out = tc.train(model, tokenizer, train, val or train[:64], labels, plan, progress, should_stop=should_stop,
                   max_steps=recipe.steps, keep_on_stop=keep_on_stop)
    scores = {}
    for lang, sentences in test_sets.items():
        ev = tc.evaluate(model, tokenizer, sentences, labels, recipe.max_length, None if keep_on_stop else should_stop)
        gold = [s.tags for s in sentences]
        scores[lang] = {"f1": ev["report"]["overall"]["f1"], "report": ev["report"],
                        "errors": errors_by_type(gold, ev["pred"]), "pred": ev["pred"],
                        "counts": ner_metrics.sentence_counts(gold, ev["pred"])}
    meta = {"train_languages": list(train_sets), "train_sentences": len(train), "steps": out.steps,
            "total_steps": out.total_steps, "stopped": out.stopped,
            "epochs": plan.epochs, "best_step": out.best_step, "recipe": asdict(recipe), **frozen,
            "validation_f1": round(out.best_val.get("overall", {}).get("f1", 0.0), 4),
            "step_s": round(out.step_seconds, 4), "train_s": round(time.perf_counter() - t0, 2),
            "losses": [round(l, 4) for l in out.losses]}
    return model, {"meta": meta, "scores": scores}


def predict(model: tc.TokenClassifier, tokenizer, words: list[list[str]], labels: list[str],
            max_length: int = MAX_LENGTH) -> list[dict]:
    """Tags and entities per sentence (`token_classification.predict`)."""
    return tc.predict(model, tokenizer, words, labels, max_length)


def split_words(text: str) -> list[str]:
    """A learner's sentence as words, the way the shipped set is split (punctuation apart)."""
    return [w for w, _, _ in ner_data.words_with_offsets(text)]


def tag_texts(model: tc.TokenClassifier, tokenizer, texts: list[str], labels: list[str],
              max_length: int = MAX_LENGTH) -> list[list[dict]]:
    """Entities of each raw text with character offsets, as the token-classification pipeline gives them
    ({entity_group, word (as written), start, end (exclusive), score}): the text split into words the way
    the shipped set is, tagged per word (`predict`), each entity mapped back to its characters."""
    spans = [ner_data.words_with_offsets(t) for t in texts]
    found = predict(model, tokenizer, [[w for w, _, _ in s] for s in spans], labels, max_length) if texts else []
    out = []
    for text, s, res in zip(texts, spans, found):
        rows = []
        for ent in res["entities"]:
            start, end = s[ent["start"]][1], s[ent["end"] - 1][2]
            rows.append({"entity_group": ent["type"], "word": text[start:end], "start": start, "end": end,
                         "score": ent["score"]})
        out.append(rows)
    return out
