"""Sentence embeddings from a plain `AutoModel`: mean pooling + L2 normalisation.

This is what `SentenceTransformer.encode` does for all-MiniLM-L6-v2, without importing
sentence_transformers (10 s of imports). Batches are sorted by length so that padding is
small; results come back in the input order. Other tabs (zero-shot / sentiment by
embedding similarity) import `embed_texts` from here.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from backend.engines.embedding import batching
from backend.runtime import budget
from backend.runtime.config import get_settings
from backend.runtime.errors import InputError

ProgressFn = Callable[[int, int], None]  # (done, total)

DEFAULT_MAX_LENGTH = 256  # all-MiniLM-L6-v2 was trained with max_seq_length 256
BATCH = 64  # texts per forward pass, longest first
CHUNK = 256  # texts per call when a caller embeds many in turns (progress and Stop between calls)


def embed_texts(
    texts: Sequence[str],
    model,
    tokenizer,
    batch_size: int = BATCH,
    progress: ProgressFn | None = None,
    max_length: int | None = None,
) -> np.ndarray:
    """Embed `texts` -> float32 array (n, dim), each row L2-normalised (cosine = dot).

    Checks the request's budget (backend.runtime.budget) before each batch: past its deadline or on a
    cancel it raises BudgetExceeded / Cancelled saying how many texts were embedded.
    """
    texts = list(texts)
    if batch_size < 1:
        raise InputError("batch_size must be at least 1.")
    dim = int(getattr(model.config, "hidden_size", 0))
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    if max_length is None:
        tok_max = getattr(tokenizer, "model_max_length", DEFAULT_MAX_LENGTH) or DEFAULT_MAX_LENGTH
        pos_max = getattr(model.config, "max_position_embeddings", DEFAULT_MAX_LENGTH)
        max_length = min(DEFAULT_MAX_LENGTH, int(tok_max), int(pos_max))
    if progress is None and len(texts) <= batching.SMALL_REQUEST and batching.enabled():
        budget.check("embedded 0 texts", "Send the request again.")
        return _shared_forward(model, tokenizer, max_length).submit(texts)
    return _embed(texts, model, tokenizer, batch_size, progress, max_length)


def _shared_forward(model, tokenizer, max_length: int) -> batching.Coalescer:
    """The coalescer that batches small requests to `model` with concurrent ones."""
    limit = get_settings().batch_max

    def make_run(m):
        return lambda texts: _embed(texts, m, tokenizer, max(limit, len(texts)), None, max_length)

    return batching.coalescer_for(model, (id(tokenizer), max_length), make_run, limit)


def _embed(texts: list[str], model, tokenizer, batch_size: int, progress: ProgressFn | None,
           max_length: int) -> np.ndarray:
    dim = int(getattr(model.config, "hidden_size", 0))
    # Sort by length (characters are a cheap, good proxy of tokens) so batches pad little.
    order = np.argsort([-len(t) for t in texts], kind="stable")
    out = np.empty((len(texts), dim), dtype=np.float32)
    device = next(model.parameters()).device
    done = 0
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            budget.check(f"embedded {done:,} of {len(texts):,} texts", "Embed fewer texts in one request.")
            idx = order[start:start + batch_size]
            batch = [texts[i] for i in idx]
            enc = tokenizer(batch, padding=True, truncation=True, max_length=max_length,
                            return_tensors="pt")
            enc = {k: v.to(device) for k, v in enc.items()}
            hidden = model(**enc).last_hidden_state.float()
            pooled = torch.nn.functional.normalize(mean_pool(hidden, enc["attention_mask"]), p=2, dim=1)
            out[idx] = pooled.cpu().numpy()
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
    return out


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean of the token states, padding left out: the sentence vector before normalisation
    (the probe, the fine-tuned classifier and the offline sentiment model pool the same way)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)

