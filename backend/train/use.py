"""A session's trained classifier, put to use: classify with it, serve the Pipelines' Classify
task with it ("Use in Pipelines"), and hand it out as a `save_pretrained` folder in a zip.

All of it is per session (the training store, keyed by the Gradio session hash): another
session's Classify and downloads are untouched. Forwards run in the stateless GPU tasks of
features.py / finetune.py, with the weights passed in; the store stays in the app's process.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from backend import hub
from backend.runtime.errors import InputError
from backend.engines.tasks.text import ranked_labels
from backend.train import features
from backend.train import gpu
from backend.engines.classify import finetune
from backend.train.store import Trained, get_store
from backend.runtime.validation import as_bool, one_of

METHOD_NAMES = {"probe": "feature extraction + logistic regression", "finetune": "fine-tuning"}
SESSION_METHOD = "session-trained"  # the `method` of a Classify result served by a session's model


def pick(t: Trained, method) -> str:
    """`method` ("" / "best" = the session's best) checked against what the session holds."""
    method = one_of("method", method, ("best", "probe", "finetune"), default="best")
    if getattr(t, "task", None) == "ner":  # ner_use.NerTrained: a token classifier, not a text classifier
        raise InputError("This session's model is a token classifier (NER), not a text classifier: tag text "
                         "with it in the Train tab (/predict_ner), or train a classifier (/train) to use this.")
    method = t.best if method == "best" else method
    if method not in t.methods():
        raise InputError(f"This session has no '{method}' classifier; it has: {', '.join(t.methods()) or 'none'}. "
                         "Train with that method first.")
    return method


def probabilities(t: Trained, method: str, texts: list[str]) -> np.ndarray:
    """(n, n_labels) class probabilities of `texts` under the session's `method` classifier."""
    if method == "probe":
        return t.probe.predict_proba(features.extract(texts, t.checkpoint, t.override))
    return finetune.predict_proba(gpu.HubWorker(t.override), t.weights, texts, len(t.labels))[0]


def download_stem(dataset_name: str, method: str) -> str:
    """The name of the Download's zip (and of the folder inside it) for a classifier trained on `dataset_name`."""
    return f"classifier-{''.join(c if c.isalnum() else '-' for c in dataset_name)[:40]}-{method}"


def describe(t: Trained, method: str) -> dict:
    """Provenance of a session's classifier, in the shape of `LoadedModel.describe()`."""
    score = t.scores.get(method, {})
    acc = score.get("accuracy")
    name = f"your classifier trained on {t.dataset['name']}" + (f", test acc {acc:.2f}" if acc is not None else "")
    return {"role": "sentiment", "checkpoint": name, "source": "session", "method": SESSION_METHOD,
            "classifier": METHOD_NAMES[method], "trained_method": method, "base_checkpoint": t.checkpoint,
            "trained_on": t.dataset["name"], "test_accuracy": acc, "test_macro_f1": score.get("macro_f1"),
            "test_n": score.get("n"), "test_ci95": score.get("ci95"),
            "labels": list(t.labels), "device": "", "note": f"{METHOD_NAMES[method]} over {t.checkpoint}",
            "download": download_stem(t.dataset["name"], method)}  # the folder the Train tab's Download unzips to


# ----------------------------------------------------------------------------- Use in Pipelines
def use_trained(session_id: str, on=True, method: str = "") -> dict:
    """Make the session's trained classifier its Classify model in Pipelines (on), or go back to
    the profile's model (off). Only this session is affected."""
    on = as_bool("on", on)
    method = one_of("method", method, ("best", "probe", "finetune"), default="best")  # checked before the session
    store = get_store()
    s = store.session(session_id)
    if not on:
        s.use_in_pipelines = None
        return {"in_use": False, "model": None,
                "message": "Pipelines' Classify uses the profile's model again."}
    t = store.trained(session_id)
    method = pick(t, method)
    s.use_in_pipelines = method
    d = describe(t, method)
    return {"in_use": True, "method": method, "model": d,
            "message": f"Pipelines' Classify now uses {d['checkpoint']} ({METHOD_NAMES[method]}), in this session only."}


def in_use(session_id: str | None) -> tuple[Trained, str] | None:
    """(trained, method) when this session asked for its own classifier in Pipelines, else None."""
    if not session_id or not isinstance(session_id, str):
        return None
    s = get_store().peek(session_id)
    if s is None or not s.use_in_pipelines or s.trained is None or s.use_in_pipelines not in s.trained.methods():
        return None
    return s.trained, s.use_in_pipelines


def classify_in_session(session_id: str | None, texts: list[str], label_notice: bool = False) -> dict | None:
    """The Classify result by the session's own classifier, or None when it uses the profile's model."""
    found = in_use(session_id)
    if found is None:
        return None
    t, method = found
    start = time.perf_counter()
    probs = probabilities(t, method, texts)
    notices = ["Label descriptions are ignored: your trained classifier has its own labels."] if label_notice else []
    return {"task": "classify", "model": describe(t, method), "method": SESSION_METHOD, "notices": notices,
            "results": [ranked_labels(text, t.labels, probs[i]) for i, text in enumerate(texts)],
            "scoring": f"softmax over the logits of your {METHOD_NAMES[method]} classifier",
            "seconds": round(time.perf_counter() - start, 4)}


# ----------------------------------------------------------------------------- Download
def _card(t: Trained, method: str) -> str:
    score = t.scores.get(method, {})
    ds = t.dataset
    counts = ds.get("counts", {}).get("train", {})
    how = ("The encoder is unchanged (saved here as it was); `probe.safetensors` holds the logistic "
           "regression: L2-normalised mean-pooled last hidden states, standardised with `mean` and `scale`, "
           "then `@ weight + bias`." if method == "probe" else
           "The encoder was fine-tuned with a linear head (`head.safetensors`: `weight`, `bias`) on its "
           "mean-pooled last hidden state.")
    acc, f1 = score.get("accuracy"), score.get("macro_f1")
    return f"""---
library_name: transformers
base_model: {t.checkpoint}
pipeline_tag: text-classification
tags: [transformers-lab, {method}]
---

# A text classifier trained in Transformers Lab

- **Data:** {ds['name']} ({ds.get('source', '?')}): {ds['sizes']['train']} train / {ds['sizes']['validation']} validation / {ds['sizes']['test']} test examples; labels {', '.join(t.labels)}.
  Train examples per label: {', '.join(f'{k} {v}' for k, v in counts.items()) or 'n/a'}.
- **Method:** {METHOD_NAMES[method]} over `{t.checkpoint}`. {how}
- **Test score:** {"not measured: its training was stopped before the test pass" if acc is None else f"accuracy {acc:.4f}, macro-F1 {f1 if f1 is None else f'{f1:.4f}'} on the test split"}.

## Use it

```python
import torch, json
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer

tok, enc = AutoTokenizer.from_pretrained("."), AutoModel.from_pretrained(".").eval()
labels = json.load(open("labels.json"))
batch = tok(["I love it"], padding=True, truncation=True, return_tensors="pt")
with torch.no_grad():
    h = enc(**batch).last_hidden_state
m = batch["attention_mask"].unsqueeze(-1).float()
pooled = (h * m).sum(1) / m.sum(1)
{"p = load_file('probe.safetensors')" if method == "probe" else "p = load_file('head.safetensors')"}
{"z = (torch.nn.functional.normalize(pooled, dim=1) - p['mean']) / p['scale']" if method == "probe" else "z = pooled"}
logits = z @ {"p['weight'] + p['bias']" if method == "probe" else "p['weight'].T + p['bias']"}
print(labels[int(logits.argmax(-1))])
```
"""


def _write_folder(t: Trained, method: str, folder: Path) -> None:
    from safetensors.torch import save_file
    import torch

    lm = hub.load(gpu.ROLE, t.override)
    if method == "probe":
        folder.mkdir(parents=True, exist_ok=True)
        lm.model.save_pretrained(folder)
        save_file({k: torch.as_tensor(np.asarray(getattr(t.probe, k), dtype=np.float32)) for k in
                   ("mean", "scale", "weight", "bias")}, str(folder / "probe.safetensors"))
        lm.tokenizer.save_pretrained(folder)
        (folder / "labels.json").write_text(json.dumps(list(t.labels)))
    else:
        finetune.save_folder(folder, lm.model, t.weights, lm.tokenizer, t.labels)
    (folder / "README.md").write_text(_card(t, method), encoding="utf-8")


def export(session_id: str, method: str = "", root: str | None = None) -> dict:
    """The session's classifier as a zip of a `save_pretrained` folder with a model card, written
    to the session's own temp folder under `root` (deleted with the session)."""
    method = one_of("method", method, ("best", "probe", "finetune"), default="best")  # checked before the session
    store = get_store()
    t = store.trained(session_id)
    method = pick(t, method)
    start = time.perf_counter()
    stem = download_stem(t.dataset["name"], method)
    zpath, files = store.zipped(session_id, root, stem, lambda folder: _write_folder(t, method, folder),
                                stored=(".safetensors",))
    return {"path": str(zpath), "files": files, "method": method, "megabytes": round(zpath.stat().st_size / 1e6, 1),
            "seconds": round(time.perf_counter() - start, 2), "model": describe(t, method)}
