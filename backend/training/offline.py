"""The offline `sentiment` role: feature extraction, trained once (issue 13, item 3).

Under the `local` profile there is no fine-tuned sentiment checkpoint, and cosine similarity to
label descriptions gets easy reviews wrong. The book's chapter 2 recipe does better: MiniLM's
mean-pooled hidden states into a logistic regression, trained on the shipped sentiment set.
Method (b) serves it: 0.89 test accuracy after 2.5 s (quiet box) to 30 s (busy box) of CPU.
Fine-tuning (c) scores higher when it gets its minute on a quiet box (0.963 after 120 steps in
52 s), but on a busy box the same minute ran 4 steps and scored 0.49 (bench/results/train.md);
serving (c) needs training by steps, not seconds, and its own copy of the encoder.

It is trained on first use (or by `python -m backend.models pull --profile local`) and cached
beside the converted decoder with `conversion.write_once` (temp folder, rename). The cache key
covers the data, the encoder's weights and this recipe's version, so a change retrains.
`ProbeClassifier` serves it like any sequence classifier: `model(**enc).logits`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from backend import config
from backend.conversion import _file_fingerprint, write_once
from backend.embedding import DEFAULT_MAX_LENGTH, embed_texts, mean_pool
from backend.training import datasets as D
from backend.training import metrics as M
from backend.training import probe as P

RECIPE = "sentiment-probe-v1"  # bump when the features or the fit change
DATASET = "sentiment"
ARRAYS = ("mean", "scale", "weight", "bias")


def _key(location: Path) -> str:
    h = hashlib.sha256(RECIPE.encode())
    for split in D.SPLITS:
        h.update((D.DATA_DIR / DATASET / f"{split}.jsonl").read_bytes())
    weights = sorted(location.glob("*.safetensors")) or sorted(location.glob("*.bin"))
    for w in weights:
        h.update(w.name.encode() + _file_fingerprint(w).encode())
    return h.hexdigest()[:16]


def cache_dir(location: str | Path, root: Path | None = None) -> Path:
    root = root or config.get_settings().cache_dir
    return root / "trained" / f"{RECIPE}-{_key(Path(location))}"


def train(model, tokenizer) -> tuple[P.Probe, dict]:
    """Fit the probe on the shipped set's train split; score it on validation and test."""
    t0 = time.perf_counter()
    ds = D.load_shipped(DATASET)
    feats = {s: embed_texts([t for t, _ in ds.split(s)], model, tokenizer) for s in D.SPLITS}
    ys = {s: np.array([y for _, y in ds.split(s)], dtype=np.int64) for s in D.SPLITS}
    features_s = time.perf_counter() - t0
    probe = P.fit(feats["train"], ys["train"], len(ds.labels), seed=0)
    test = M.report(ys["test"], probe.predict_proba(feats["test"]), ds.labels)
    val = M.accuracy(ys["validation"], probe.predict_proba(feats["validation"]).argmax(1))
    meta = {"recipe": RECIPE, "trained_on": f"{DATASET} (shipped)", "labels": [l.upper() for l in ds.labels],
            "sizes": {s: len(ds.split(s)) for s in D.SPLITS},
            "test_accuracy": round(test["accuracy"], 4), "test_macro_f1": round(test["macro_f1"], 4),
            "validation_accuracy": round(val, 4), "features_s": round(features_s, 2),
            "train_s": round(time.perf_counter() - t0, 2)}
    return probe, meta


def _save(folder: Path, probe: P.Probe, meta: dict) -> None:
    from safetensors.numpy import save_file

    save_file({k: np.ascontiguousarray(getattr(probe, k), dtype=np.float32) for k in ARRAYS},
              str(folder / "probe.safetensors"))
    (folder / "probe.json").write_text(json.dumps(meta, indent=1))


def _read(folder: Path) -> tuple[P.Probe, dict]:
    from safetensors.numpy import load_file

    arrays = load_file(str(folder / "probe.safetensors"))
    return P.Probe(**{k: arrays[k] for k in ARRAYS}), json.loads((folder / "probe.json").read_text())


def ensure(model, tokenizer, location: str | Path, root: Path | None = None) -> tuple[P.Probe, dict]:
    """The cached probe for this encoder, trained now if it is not cached yet."""
    folder = cache_dir(location, root)
    built: dict = {}

    def build(tmp: Path) -> None:
        built["probe"], built["meta"] = train(model, tokenizer)
        _save(tmp, built["probe"], built["meta"])

    if write_once(folder, build):
        return built["probe"], {**built["meta"], "cached": False}
    probe, meta = _read(folder)
    return probe, {**meta, "cached": True}


class ProbeClassifier(nn.Module):
    """Encoder -> mean pooling -> L2 norm -> standardise -> linear: the probe as one module,
    so the Pipelines' sequence-classification runner serves it unchanged (`.logits`, `config.id2label`)."""

    def __init__(self, encoder, probe: P.Probe, labels: list[str]):
        super().__init__()
        self.encoder = encoder
        cfg = copy.deepcopy(encoder.config)  # the shared encoder's own config stays untouched
        cfg.id2label = dict(enumerate(labels))
        cfg.label2id = {l: i for i, l in enumerate(labels)}
        cfg.architectures = ["MeanPoolProbeForSequenceClassification"]
        cfg.max_position_embeddings = min(DEFAULT_MAX_LENGTH, cfg.max_position_embeddings)  # as trained
        self.config = cfg
        device = next(encoder.parameters()).device
        for k in ARRAYS:
            self.register_buffer(k, torch.as_tensor(np.asarray(getattr(probe, k), dtype=np.float32), device=device))

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, **_):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        kwargs = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **kwargs).last_hidden_state.float()
        pooled = nn.functional.normalize(mean_pool(hidden, attention_mask), p=2, dim=1)
        logits = ((pooled - self.mean) / self.scale) @ self.weight + self.bias
        return _Output(logits)


class _Output:
    def __init__(self, logits):
        self.logits = logits


def serving_model(encoder, tokenizer, location: str | Path, root: Path | None = None) -> tuple[ProbeClassifier, dict]:
    """The offline sentiment classifier over an already-loaded encoder (weights shared, not copied)."""
    probe, meta = ensure(encoder, tokenizer, location, root)
    return ProbeClassifier(encoder, probe, meta["labels"]).eval(), meta
