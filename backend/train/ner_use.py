"""A session's trained NER model, put to use: tag a sentence with it (entities with scores, as
the Pipelines' NER shows them) and hand it out as a zip of a `save_pretrained`-style folder
with a model card. It lives in the Train store like a classifier (`NerTrained`), so idle
eviction, the memory budget and the per-session temp folder apply to it too."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from backend import hub
from backend.engines.ner import data as ner_data
from backend.engines.ner import token_classification as tc
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text
from backend.train import ner_gpu
from backend.train.gpu import ROLE
from backend.train.store import Trained, get_store

TASK = "ner"


@dataclass
class NerTrained(Trained):
    """A token classifier's weights (encoder + head + word-shape embedding) and its recipe."""

    recipe: tc.Recipe | None = None
    task: str = TASK

    def methods(self) -> list[str]:
        return [TASK]


def trained(session_id: str) -> NerTrained:
    t = get_store().trained(session_id)
    if not isinstance(t, NerTrained):
        raise InputError("This session's model is a text classifier, not a token classifier: train the "
                         "'Token classification (NER)' task first (the Train tab, or /train_ner).")
    return t


def describe(t: NerTrained) -> dict:
    """Provenance of the session's NER model: base, data, steps, test F1 (with its split and size)."""
    s = t.scores.get(TASK, {})
    return {"role": "ner", "source": "session", "task": TASK, "base_checkpoint": t.checkpoint,
            "checkpoint": f"your NER model trained on {t.dataset['name']}", "trained_on": t.dataset["name"],
            "labels": list(t.labels), "steps": s.get("steps"), "test_f1": s.get("f1"), "test_n": s.get("n"),
            "test_f1_per_type": s.get("per_type", {}), "word_shapes": bool(t.recipe and t.recipe.shape_dim)}


def predict(session_id: str, text: str) -> dict:
    """Tag `text` (split into words and punctuation) with the session's NER model: one tag per
    word, and the entities with character offsets and scores (mean top probability of their words)."""
    text = check_text(text, "text")
    t = trained(session_id)
    found = ner_data.words_with_offsets(text)
    if not found:
        raise InputError("text has no words to tag.")
    if len(found) > ner_data.MAX_WORDS:
        raise InputError(f"text has {len(found)} words; at most {ner_data.MAX_WORDS} can be tagged at once.")
    words = [w for w, _, _ in found]
    t0 = time.perf_counter()
    out = ner_gpu.predict(t.override, t.weights, t.labels, t.recipe, [words])[0]
    entities = [{"entity_group": e["type"], "word": text[found[e["start"]][1]:found[e["end"] - 1][2]],
                 "score": round(e["score"], 4), "start": found[e["start"]][1], "end": found[e["end"] - 1][2],
                 "words": [e["start"], e["end"]]} for e in out["entities"]]
    return {"text": text, "tokens": words, "tags": out["tags"], "entities": entities,
            "seconds": round(time.perf_counter() - t0, 3), "model": describe(t)}


def _card(t: NerTrained) -> str:
    d, s = describe(t), t.scores.get(TASK, {})
    per = ", ".join(f"{k} {v:.3f}" for k, v in d["test_f1_per_type"].items())
    f1 = s.get("f1")
    return f"""---
library_name: transformers
base_model: {t.checkpoint}
pipeline_tag: token-classification
tags: [transformers-lab, ner]
---

# A token classifier (NER) trained in Transformers Lab

- **Data:** {t.dataset['name']} ({t.dataset.get('source', '?')}): {t.dataset['sizes']['train']} train / {t.dataset['sizes']['validation']} validation / {t.dataset['sizes']['test']} test sentences; labels {', '.join(t.labels)}.
- **Method:** the book's chapter 4: `{t.checkpoint}` + dropout + a linear head per token, the first sub-word piece of each word labelled{', plus a learned word-shape embedding (' + str(t.recipe.shape_dim) + ' dims)' if d['word_shapes'] else ''}; {s.get('steps')} steps.
- **Test score (seqeval, entity level):** F1 {f1 if f1 is None else f'{f1:.4f}'} on {s.get('n')} test sentences; per type: {per or 'n/a'}.

## Use it

```python
from backend.engines.ner.token_classification import load_folder, predict  # Transformers Lab's server
model, tokenizer, labels = load_folder(".")
print(predict(model, tokenizer, [["Angela", "Merkel", "visited", "Paris", "."]], labels))
```

`head.safetensors` holds the head (and word-shape embedding), `ner.json` the recipe, `labels.json` the tags.
"""


def export(session_id: str, root: str | None = None) -> dict:
    """The session's NER model as a zip (encoder folder + head + tokenizer + labels + card), in the
    session's own temp folder under `root` (deleted with the session)."""
    t = trained(session_id)
    start = time.perf_counter()
    stem = "ner-" + (re.sub(r"[^A-Za-z0-9]+", "-", t.dataset["name"]).strip("-")[:40] or "model")

    def write(folder) -> None:
        lm = hub.load(ROLE, t.override)
        model = ner_gpu.build(lm, t.labels, t.recipe, t.weights)  # no forward: it is only written
        tc.save_folder(folder, model, lm.tokenizer, t.labels, t.recipe)
        (folder / "README.md").write_text(_card(t), encoding="utf-8")

    zpath, files = get_store().zipped(session_id, root, stem, write, stored=(".safetensors",))
    return {"path": str(zpath), "files": files, "megabytes": round(zpath.stat().st_size / 1e6, 1),
            "seconds": round(time.perf_counter() - start, 2), "model": describe(t)}
