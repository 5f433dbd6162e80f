"""From the encoder's output to a sentence vector: mean pooling, the embedder's recipe.

Average the last layer's token vectors over real tokens (padding excluded), then scale to
length 1 so that cosine similarity is a dot product. backend/engines/embedding/vectors.py does the same with
the model's forward; here it is done on our from-scratch hidden states, and compared.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def mean_pooling(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T, D), (B, T) -> (B, D): the average of the real tokens' vectors."""
    mask = attention_mask.to(hidden.device)[..., None].to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)


def sentence_embedding(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean pooling, then L2 normalisation (all-MiniLM-L6-v2's `Normalize` module)."""
    return F.normalize(mean_pooling(hidden, attention_mask), p=2, dim=-1)
