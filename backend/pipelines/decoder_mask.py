"""Fill-mask with a causal decoder: what the `local` profile does, having no masked LM.

A decoder reads left to right, so it cannot look past the mask on its own. Two steps:
1. candidates: the whole-word tokens likeliest to come next given the text left of the mask
   (one forward of the left context);
2. rerank: the log-likelihood of the whole sentence with each candidate in place, so the
   right context counts too (the candidates of a short sentence scored together, several rows per
   forward; on a long text the left context is read once into a key/value cache, in chunks, and each
   candidate read alone after it, its right context in chunks: memory stays bounded, the budget and
   Stop are checked between chunks, and the door prices the whole, `contracts.fill_mask_cost`).
Both scores are returned; the order is the second's.
"""

from __future__ import annotations

import functools
import inspect
import math

import torch

from backend.runtime import config
from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.engines.generation.prefill import shape_of
from backend.engines.tasks.text import device_of, model_max_length
from backend.runtime.memory_budget import PREFILL_CHUNK, SCORE_COPIES, Shape

METHOD = "decoder-fill-mask"  # the fill_mask role's method under the local profile (config.LOCAL)
METHOD_LABEL = f"{config.method_name(config.METHOD_DECODER_MASK)}: {config.method_text(config.METHOD_DECODER_MASK)}"
PLACEHOLDERS = ("[MASK]", "<mask>")
N_CANDIDATES = 20  # candidates reranked (more when top_k asks for more)
MAX_LOGITS = 32_000_000  # floats of logits per scoring forward: bounds memory on long right contexts
SHORT_ROW = 256  # a sentence up to this many tokens: candidates scored whole, several per forward
ROW_BYTES = 256 * 2**20  # what one batched scoring forward may hold (attention scores and logits)


def split_mask(text: str) -> tuple[str, str]:
    """`text` -> (left, right) of its one mask, written [MASK] or <mask>."""
    count = sum(text.count(p) for p in PLACEHOLDERS)
    if count == 0:
        raise InputError("The text has no [MASK]: put [MASK] (or <mask>) where the missing word goes.")
    if count > 1:
        raise InputError(f"The text has {count} [MASK] tokens; use exactly one.")
    for p in PLACEHOLDERS:
        if p in text:
            left, right = text.split(p)
            return left, right
    raise AssertionError("unreachable")


@functools.lru_cache(maxsize=4)
def _word_tokens(tokenizer) -> tuple[torch.Tensor, torch.Tensor, tuple[str, ...]]:
    """Masks over the vocabulary: tokens that are a word after a space (" capital"), tokens
    that are a word on their own ("Paris"), and every token's text. Decoded once per tokenizer."""
    n = len(tokenizer)
    texts = tuple(tokenizer.batch_decode([[i] for i in range(n)]))
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    spaced = torch.zeros(n, dtype=torch.bool)
    bare = torch.zeros(n, dtype=torch.bool)
    for i, s in enumerate(texts):
        if i in special:
            continue
        if len(s) > 1 and s[0] == " " and s[1:].isalnum():
            spaced[i] = True
        elif s.isalnum():
            bare[i] = True
    return spaced, bare, texts


def _start_ids(tokenizer) -> list[int]:
    """What the sentence is conditioned on: the tokenizer's own start tokens, else its
    end-of-text token (a document boundary, as in pre-training)."""
    ids = tokenizer("", add_special_tokens=True)["input_ids"]
    if ids:
        return list(ids)
    vocab = tokenizer.get_vocab()
    for tok in ("<|endoftext|>", getattr(tokenizer, "bos_token", None), getattr(tokenizer, "eos_token", None)):
        if tok in vocab:
            return [int(vocab[tok])]
    return []


def _shape(model):
    """The model's shape for the scoring's memory; a model without a full config (a hand-made one) is read as
    the smallest that would matter: its rows are short anyway."""
    try:
        return shape_of(model)
    except AttributeError:
        vocab = int(getattr(getattr(model, "config", None), "vocab_size", 0) or 50_000)
        return Shape(layers=1, heads=1, kv_heads=1, head_dim=1, vocab=vocab)


def _new_cache(model):
    """A key/value cache for the left context (None: the model keeps none; it is then read whole)."""
    config = getattr(model, "config", None)
    if config is None or not getattr(config, "use_cache", True) or getattr(config, "is_encoder_decoder", False):
        return None
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def _token_logprobs(model, ids: torch.Tensor, keep: int) -> torch.Tensor:
    """log p(ids[:, t] | ids[:, :t]) for the last `keep` tokens of each row -> (batch, keep)."""
    kwargs = {}
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = keep + 1  # only the positions we score: bounded memory
    logits = model(input_ids=ids, **kwargs).logits[:, -(keep + 1):-1].float()
    logp = logits.log_softmax(-1)
    return logp.gather(-1, ids[:, -keep:].unsqueeze(-1)).squeeze(-1)


def _prefix_scores(model, prefix: torch.Tensor, cache=None, chunk: int = PREFILL_CHUNK) -> tuple[float, torch.Tensor]:
    """start + left context, read PREFILL_CHUNK tokens at a time into `cache` (when given) -> (its
    log-likelihood, the next-token log-probs). In chunks: one forward of a 4,500-token left context held
    9 heads x 4,500^2 attention scores per layer and 4,500 x 49,152 logits (GBs); a chunk holds 128 rows."""
    n = prefix.shape[1]
    chunk = chunk if cache is not None else n  # no cache: read whole (a short text, or a model without one)
    total, last = 0.0, None
    for i in range(0, n, chunk):
        budget.check(f"read {i:,} of {n:,} tokens before the mask", "Shorten the text before the mask.")
        piece = prefix[:, i:i + chunk]
        kwargs = {"past_key_values": cache, "use_cache": True} if cache is not None else {}
        logits = model(input_ids=piece, **kwargs).logits[0].float()
        lp = logits.log_softmax(-1)
        targets = prefix[0, i + 1:i + 1 + chunk]
        total += float(lp[: len(targets)].gather(-1, targets.unsqueeze(-1)).sum().detach())
        last = lp[-1]
    return total, last.cpu()


def scoring_rows(shape, left: int, right: int) -> int:
    """Candidates scored per forward when each is read whole (0: the text is long; each candidate is
    read alone after the cached left context, its right context in chunks)."""
    row = left + 1 + right
    if row > SHORT_ROW:
        return 0
    per_row = shape.heads * row * row * 4 * SCORE_COPIES + (1 + right) * shape.vocab * 4 * SCORE_COPIES
    return max(1, min(MAX_LOGITS // ((1 + right) * shape.vocab), int(ROW_BYTES // per_row)))


def scoring_bytes(shape, left: int, right: int, rows: int) -> int:
    """What the scoring holds at once (bytes): `rows` whole rows, or the cached path's cache and one chunk."""
    if rows:
        row = left + 1 + right
        return rows * (shape.heads * row * row * 4 * SCORE_COPIES + (1 + right) * shape.vocab * 4 * SCORE_COPIES)
    per_token = 2 * shape.layers * shape.kv_heads * shape.head_dim * shape.dtype_bytes
    chunk = min(PREFILL_CHUNK, max(left, right + 1))
    return (per_token * (left + right + 2) + chunk * shape.vocab * 4 * SCORE_COPIES
            + shape.heads * chunk * (left + right + 2) * 4 * SCORE_COPIES)


def _cached_tail(model, cache, next_logp: torch.Tensor, cand: list[int], right_ids: list[int]) -> torch.Tensor:
    """Each candidate read alone after the cached left context (`next_logp`: log p(. | left), from its
    read), its right context PREFILL_CHUNK tokens at a time; the cache is cut back to the left context after
    each -> (n, 1 + len(right_ids)) log-probs: the candidate, then each right-context token."""
    device = device_of(model)
    out = torch.empty(len(cand), 1 + len(right_ids))
    for c, token in enumerate(cand):
        budget.check(f"scored {c} of {len(cand)} candidates", "Ask for fewer candidates or shorten the text after the mask.")
        seq = torch.tensor([[token] + list(right_ids)], device=device)
        out[c, 0] = next_logp[token]
        fed = seq[:, :-1]  # each fed token predicts the next; the last one predicts nothing we score
        for i in range(0, fed.shape[1], PREFILL_CHUNK):
            piece = fed[:, i:i + PREFILL_CHUNK]
            lp = model(input_ids=piece, past_key_values=cache, use_cache=True).logits[0].float().log_softmax(-1)
            targets = seq[0, i + 1:i + 1 + piece.shape[1]]
            out[c, 1 + i:1 + i + len(targets)] = lp.gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu()
            budget.fair_threads()
        if fed.shape[1]:
            cache.crop(-fed.shape[1])
    return out


def fill_mask(model, tokenizer, text: str, top_k: int = 5, n_candidates: int = N_CANDIDATES) -> dict:
    """The `top_k` best words for the mask in `text` -> {candidates, n_reranked, method_label, ...}.

    Each candidate: token, token_str, sequence, left_logprob (log p(word | left context)),
    left_rank, sentence_logprob (log-likelihood of the whole sentence with the word in
    place), and score (softmax of sentence_logprob over the reranked candidates).
    """
    left, right = split_mask(text)
    spaced = left[-1:].isspace()
    start = _start_ids(tokenizer)
    left_ids = tokenizer(left.rstrip() if spaced else left, add_special_tokens=False)["input_ids"]
    right_ids = tokenizer(right, add_special_tokens=False)["input_ids"]
    limit = model_max_length(model, tokenizer, default=2048)
    n_tokens = len(start) + len(left_ids) + 1 + len(right_ids)
    if n_tokens > limit:
        raise InputError(f"The text is {n_tokens} tokens; the model reads at most {limit}. Shorten it.")
    if not start and not left_ids:
        raise InputError("The mask is at the very start and this model has no start token: put some text before it.")
    is_spaced, is_bare, texts = _word_tokens(tokenizer)
    allowed = (is_spaced if spaced else is_bare)
    device = device_of(model)
    budget.check("nothing scored yet", "Shorten the text.")
    rows_per_forward = scoring_rows(_shape(model), len(start) + len(left_ids), len(right_ids))
    with torch.inference_mode():
        prefix = torch.tensor([start + left_ids], device=device)
        cache = None if rows_per_forward else _new_cache(model)
        rows_per_forward = rows_per_forward or (0 if cache is not None else 1)
        context_lp, next_logp = _prefix_scores(model, prefix, cache)
        vocab = min(len(allowed), next_logp.shape[-1])
        masked = next_logp[:vocab].masked_fill(~allowed[:vocab], -math.inf)
        n = min(max(int(n_candidates), int(top_k)), int(allowed[:vocab].sum()))
        if n == 0:
            raise InputError("This tokenizer has no whole-word tokens to fill the mask with.")
        left_lp, cand = torch.topk(masked, n)  # sorted: index i is left-context rank i + 1
        if rows_per_forward:
            keep = 1 + len(right_ids)
            rows = torch.tensor([start + left_ids + [int(c)] + right_ids for c in cand.tolist()], device=device)
            parts = []
            for i in range(0, n, rows_per_forward):
                budget.check(f"scored {i} of {n} candidates", "Shorten the text after the mask.")
                parts.append(_token_logprobs(model, rows[i:i + rows_per_forward], keep).cpu())
            tail = torch.cat(parts)  # (n, keep): the candidate, then each right-context token
        else:
            tail = _cached_tail(model, cache, next_logp, [int(c) for c in cand.tolist()], right_ids)
    sentence = context_lp + tail.sum(-1)
    share = sentence.softmax(-1)
    order = torch.argsort(sentence, descending=True, stable=True).tolist()
    candidates = []
    for i in order[: int(top_k)]:
        tid = int(cand[i])
        word = texts[tid].strip()
        candidates.append({
            "token": tid,
            "token_str": word,
            "score": float(share[i]),
            "sentence_logprob": float(sentence[i]),
            "left_logprob": float(left_lp[i]),
            "left_prob": float(math.exp(float(left_lp[i]))),
            "left_rank": i + 1,
            "sequence": left + word + right,
        })
    return {
        "candidates": candidates,
        "n_reranked": n,
        "mask_token": "[MASK]",
        "mask_position": len(start) + len(left_ids),
        "method_label": METHOD_LABEL,
        "scores": {
            "score": "softmax of sentence_logprob over the reranked candidates",
            "sentence_logprob": "log-likelihood of the whole sentence with the word in place",
            "left_logprob": "log p(word | text left of the mask), over the whole vocabulary",
        },
    }
