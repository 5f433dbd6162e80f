"""Classification by embedding similarity: the book's "embeddings as a lookup table" (ch. 9).

With no fine-tuned classifier offline, each label gets a short *description*; the text and
the descriptions are embedded with the sentence embedder, and a label's affinity is the
cosine between them. Single-label: softmax(cosine / temperature) over the labels. Multi-label:
each label scored on its own, sigmoid((cosine - threshold) / temperature). Neither is a
calibrated probability: they rank labels; the raw cosines are returned too.
"""

from __future__ import annotations

import numpy as np

from backend.engines.embedding.vectors import DEFAULT_MAX_LENGTH, embed_texts
from backend.runtime.errors import InputError
from backend.engines.tasks.text import ranked_labels
from backend.runtime.validation import clean_text

DEFAULT_TEMPERATURE = 0.05
DEFAULT_THRESHOLD = 0.25
MAX_LABELS = 20
MAX_LABEL_CHARS = 200

SENTIMENT_DESCRIPTIONS = {
    "POSITIVE": "A happy, satisfied, positive message: the writer is pleased and thankful.",
    "NEGATIVE": "An angry, disappointed, negative complaint: the writer is unhappy about a problem.",
}
# The same descriptions as editable text (the tab's default box content, `LABEL: description` lines).
SENTIMENT_DEFAULT = "\n".join(f"{k}: {v}" for k, v in SENTIMENT_DESCRIPTIONS.items())
DEFAULT_TEMPLATE = "This text is about {}."


def parse_label_descriptions(text: str) -> dict[str, str]:
    """`LABEL: description` lines -> {label: description}; a bare line is its own description."""
    out: dict[str, str] = {}
    for line in clean_text(text or "").splitlines():
        line = line.strip()
        if not line:
            continue
        label, sep, desc = line.partition(":")
        label = label.strip()
        if not label:
            raise InputError(f"The line {line!r} has no label before ':'. Write LABEL: description.")
        out[label] = desc.strip() if sep and desc.strip() else label
    return out


def parse_labels(labels) -> list[str]:
    """Candidate labels from a comma-separated string or a list; checks count and duplicates."""
    if isinstance(labels, str):
        items = [x.strip() for x in clean_text(labels).replace("\n", ",").split(",")]
    elif isinstance(labels, (list, tuple)):
        items = [clean_text(x).strip() if isinstance(x, str) else "" for x in labels]
    elif labels is None:
        items = []
    else:
        raise InputError("labels must be comma-separated text or a list of texts.")
    if any(len(x) > MAX_LABEL_CHARS for x in items):
        raise InputError(f"A label is longer than {MAX_LABEL_CHARS} characters: keep labels short.")
    items = [x for x in items if x]
    if not items:
        raise InputError("No candidate labels: give at least one, e.g. 'complaint, praise, question'.")
    unique = list(dict.fromkeys(items))
    if len(unique) > MAX_LABELS:
        raise InputError(
            f"{len(unique)} candidate labels given; at most {MAX_LABELS} are allowed. Keep the ones you care about."
        )
    return unique


def scores_from_cosines(cos: np.ndarray, multi_label: bool, temperature: float = DEFAULT_TEMPERATURE,
                        threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """(n_texts, n_labels) cosines -> scores (softmax per row, or independent sigmoids)."""
    if temperature <= 0:
        raise InputError("The temperature must be above 0.")
    z = np.asarray(cos, dtype=np.float64) / temperature
    if multi_label:
        return 1.0 / (1.0 + np.exp(-(np.asarray(cos, dtype=np.float64) - threshold) / temperature))
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def truncation_notices(tokenizer, texts: list[str], limit: int = DEFAULT_MAX_LENGTH) -> list[str]:
    """Say which texts the embedder reads only in part (it embeds the first `limit` tokens)."""
    lengths = [len(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"]]
    return [
        f"Text {i + 1} is {n} tokens long; the embedder reads the first {limit} only."
        for i, n in enumerate(lengths) if n > limit
    ]


def classify_by_similarity(
    model,
    tokenizer,
    texts: list[str],
    descriptions: dict[str, str],
    multi_label: bool = False,
    temperature: float = DEFAULT_TEMPERATURE,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[dict]:
    """Per text: labels sorted by score, with scores and raw cosines."""
    if not descriptions:
        raise InputError("No labels to classify into: give at least one label description.")
    labels = list(descriptions)
    vecs = embed_texts(list(texts) + [descriptions[l] for l in labels], model, tokenizer)
    text_vecs, label_vecs = vecs[: len(texts)], vecs[len(texts):]
    cos = text_vecs @ label_vecs.T
    scores = scores_from_cosines(cos, multi_label, temperature, threshold)
    return [ranked_labels(text, labels, scores[i], cosines=cos[i]) for i, text in enumerate(texts)]
