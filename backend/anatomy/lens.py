"""The logit lens: read the decoder's next-token guess after every layer.

Apply the final norm and the LM head (the unembedding) to each intermediate hidden state, as
if the model stopped there. After the last layer this *is* the model's prediction, which
the tab proves: the logits equal the model's own and the top-1 is greedy decoding's next token.
"""

from __future__ import annotations

import torch

from backend.anatomy import ops, scratch
from backend.engines.attention.extract import readable_tokens

TOP_K = 5
LENS_POSITIONS = 12  # the last positions shown (the LM head costs vocab x hidden per cell)


def lm_head(model):
    """The unembedding matrix (vocab x hidden), or None for a model without an LM head."""
    get = getattr(model, "get_output_embeddings", None)
    return get() if get is not None else None


def unembed(model, trace, hidden: torch.Tensor) -> torch.Tensor:
    """Logits for hidden states of any layer: final norm, then the LM head."""
    base = scratch.base_model(model)
    return ops.linear(lm_head(model), scratch.RECIPES[trace.family].final_norm(base, hidden))


def tied_embeddings(model) -> bool:
    """Whether the LM head is the input embedding matrix itself (SmolLM2, GPT-2: tied weights)."""
    head, emb = lm_head(model), getattr(model, "get_input_embeddings", lambda: None)()
    if head is None or emb is None or head.weight.shape != emb.weight.shape:
        return False
    return head.weight is emb.weight or head.weight.data_ptr() == emb.weight.data_ptr() \
        or bool(torch.equal(head.weight, emb.weight))


def logit_lens(model, tokenizer, trace, ref_logits: torch.Tensor, positions: list[int],
               input_ids: list[int] | None = None) -> dict:
    """Top-k next tokens (and probabilities) per layer x position, and the last layer's proof.

    With `input_ids`, also `embedding_echoes_input`: the share of positions where the row read
    straight from the embeddings predicts the input token itself (not a next token). With tied
    embeddings that is what the embedding row does: a vector scored against its own matrix row.
    """
    top1, top1_prob, top5, first_ids = [], [], [], None
    with torch.inference_mode():
        for hidden in trace.hidden:
            probs = unembed(model, trace, hidden[0, positions]).softmax(dim=-1)
            p, ids = probs.topk(TOP_K, dim=-1)
            first_ids = ids[:, 0].tolist() if first_ids is None else first_ids
            words = [readable_tokens(tokenizer, row.tolist()) for row in ids]
            top1.append([w[0] for w in words])
            top1_prob.append([round(float(x), 4) for x in p[:, 0]])
            top5.append([[[w, round(float(x), 4)] for w, x in zip(ws, ps)] for ws, ps in zip(words, p)])
        last = unembed(model, trace, trace.hidden[-1][0])
    theirs = ref_logits[0].float().to(last.device)
    greedy = int(theirs[-1].argmax())
    ours = int(last[-1].argmax())
    echoes = None
    if input_ids is not None and positions:
        echoes = sum(int(first_ids[i] == input_ids[p]) for i, p in enumerate(positions)) / len(positions)
    return {
        "positions": positions,
        "tied_embeddings": tied_embeddings(model),
        "embedding_echoes_input": echoes,
        "layers": list(range(len(trace.hidden))),
        "top1": top1,
        "top1_prob": top1_prob,
        "top5": top5,
        "last_layer_max_abs_diff": float((last - theirs).abs().max()),
        "greedy_next_token": readable_tokens(tokenizer, [greedy])[0],
        "greedy_next_id": greedy,
        "lens_next_id": ours,
        "agrees_with_greedy": ours == greedy,
    }
