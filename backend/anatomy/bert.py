"""The encoder from scratch, in the book's order (chapter 3): BERT and its relatives.

Embeddings (token + position + segment, then LayerNorm), then per layer a post-norm
attention sub-layer and a post-norm feed-forward sub-layer: x = LayerNorm(x + sublayer(x)).
Every function reads the real model's weights; the tab shows their source next to the
per-layer difference from the model's own hidden states.
"""

from __future__ import annotations

import torch

from backend.anatomy.ops import (Context, UnsupportedModel, activation, attend, layer_norm, linear,
                                 merge_heads, split_heads)



def check(model) -> None:
    """Refuse variants this recipe does not cover (relative position attention)."""
    kind = getattr(model.config, "position_embedding_type", "absolute") or "absolute"
    if kind != "absolute":
        raise UnsupportedModel(f"This encoder uses {kind} position attention; the recipe covers absolute positions.")


def position_ids(config, input_ids: torch.Tensor) -> torch.Tensor:
    """0, 1, 2... (BERT); RoBERTa counts from padding_idx + 1 and gives padding its own index."""
    if config.model_type == "bert":
        return torch.arange(input_ids.shape[1], device=input_ids.device)[None]
    real = input_ids.ne(config.pad_token_id).long()
    return torch.cumsum(real, dim=1) * real + config.pad_token_id


def embeddings(model, input_ids, token_type_ids):
    """The book's `Embeddings`: token + position (+ segment) vectors, summed, then LayerNorm."""
    emb = model.embeddings
    tokens = emb.word_embeddings.weight.float()[input_ids]
    segments = emb.token_type_embeddings.weight.float()[token_type_ids]
    positions = emb.position_embeddings.weight.float()[position_ids(model.config, input_ids)]
    return layer_norm(emb.LayerNorm, tokens + segments + positions)


def multi_head_attention(attn, x, ctx: Context):
    """The book's `MultiHeadAttention`: project to Q, K, V, split into heads, attend, concatenate."""
    n_heads = ctx.config.num_attention_heads
    q = split_heads(linear(attn.query, x), n_heads)
    k = split_heads(linear(attn.key, x), n_heads)
    v = split_heads(linear(attn.value, x), n_heads)
    out, parts = attend(q, k, v, ctx.mask)
    return merge_heads(out), parts


def attention_sublayer(layer, x, ctx: Context):
    """Post-norm, as in BERT: x = LayerNorm(x + W_o attention(x)). Returns (x, what attention added, parts)."""
    heads, parts = multi_head_attention(layer.attention.self, x, ctx)
    added = linear(layer.attention.output.dense, heads)
    return layer_norm(layer.attention.output.LayerNorm, x + added), added, parts


def feed_forward(layer, x, ctx: Context):
    """The book's `FeedForward`: expand (4x in BERT), GELU, project back."""
    act = activation(ctx.config.hidden_act)
    return linear(layer.output.dense, act(linear(layer.intermediate.dense, x)))


def feed_forward_sublayer(layer, x, ctx: Context):
    """Post-norm again: x = LayerNorm(x + FeedForward(x)). Returns (x, what the MLP added)."""
    added = feed_forward(layer, x, ctx)
    return layer_norm(layer.output.LayerNorm, x + added), added


def encoder_layer(layer, x, ctx: Context):
    """The book's `TransformerEncoderLayer` (post-norm): attention, then feed-forward."""
    x, attn_added, parts = attention_sublayer(layer, x, ctx)
    x, mlp_added = feed_forward_sublayer(layer, x, ctx)
    return x, attn_added, mlp_added, parts


def final_norm(model, x):
    """A post-norm encoder ends normalised already: nothing to add after the last layer."""
    return x


def attention_sublayer_pre_norm(layer, x, ctx: Context):
    """The pre-norm variant the book also shows: x = x + W_o attention(LayerNorm(x)).

    Not what BERT does: swap it in and every layer stops matching (a test checks that).
    """
    heads, parts = multi_head_attention(layer.attention.self, layer_norm(layer.attention.output.LayerNorm, x), ctx)
    added = linear(layer.attention.output.dense, heads)
    return x + added, added, parts


def layers(model) -> list:
    return list(model.encoder.layer)


STEPS = (embeddings, multi_head_attention, attention_sublayer, feed_forward, feed_forward_sublayer, encoder_layer)


def sequence_classification(model, hidden: torch.Tensor) -> torch.Tensor:
    """The book's `TransformerForSequenceClassification` on BERT: pooler (dense + tanh on [CLS]), then the classifier."""
    pooler = model.bert.pooler
    cls = torch.tanh(linear(pooler.dense, hidden[:, 0]))
    return linear(model.classifier, cls)
