"""The Train tab's model calls: stateless GPU tasks that ask the hub for the embedder, then run
a server on it. Everything else in the tab (sessions, the training state, the loop) lives in
the app's process, so a ZeroGPU worker keeps nothing between calls.
"""

from __future__ import annotations

import numpy as np

from backend import hub
from backend.engines.classify import finetune as FT
from backend.engines.embedding.vectors import BATCH, embed_texts
from backend.engines.classify.similarity import classify_by_similarity
from backend.runtime.device import gpu_task

ROLE = "embedder"


@gpu_task(duration=60)
def embed_chunk(texts: list[str], override: str | None = None) -> np.ndarray:
    lm = hub.load(ROLE, override)
    return embed_texts(texts, lm.model, lm.tokenizer, batch_size=BATCH)


@gpu_task(duration=60)
def zero_shot_chunk(texts: list[str], descriptions: dict[str, str], override: str | None = None) -> list[dict]:
    lm = hub.load(ROLE, override)
    return classify_by_similarity(lm.model, lm.tokenizer, texts, descriptions)


@gpu_task(duration=120)
def _train_chunk(override: str | None, *args) -> dict:
    return FT.train_chunk(hub.load(ROLE, override), *args)


@gpu_task(duration=60)
def _forward_chunk(override: str | None, weights: dict, texts: list[str], n_labels: int, stop_key: str | None = None):
    return FT.forward_chunk(hub.load(ROLE, override), weights, texts, n_labels, stop_key)


class HubWorker:
    """`finetune.run`'s worker for the Train tab: each chunk a GPU task on the (overridden) embedder."""

    def __init__(self, override: str | None = None):
        self.override = override
        self.rate_model = override or ""  # the rates its runs measure are keyed by this name
        self.rate_key = FT.rate_key(FT.TRAIN_WORK, self.rate_model)

    def train_chunk(self, *args) -> dict:
        return _train_chunk(self.override, *args)

    def forward_chunk(self, weights: dict, texts: list[str], n_labels: int, stop_key: str | None = None):
        return _forward_chunk(self.override, weights, texts, n_labels, stop_key)
