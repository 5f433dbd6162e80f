"""Fill-mask with a causal decoder: what the `local` profile does, having no masked LM.

A decoder reads left to right, so it cannot look past the mask on its own. Two steps:
1. candidates: the whole-word tokens likeliest to come next given the text left of the mask
   (one forward of the left context);
2. rerank: the log-likelihood of the whole sentence with each candidate in place, so the
   right context counts too (the candidates scored together, in one batched forward).
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
from backend.engines.tasks.text import device_of, model_max_length

METHOD = "decoder-fill-mask"  # the fill_mask role's method under the local profile (config.LOCAL)
METHOD_LABEL = f"{config.method_name(config.METHOD_DECODER_MASK)}: {config.method_text(config.METHOD_DECODER_MASK)}"
PLACEHOLDERS = ("[MASK]", "<mask>")
N_CANDIDATES = 20  # candidates reranked (more when top_k asks for more)
MAX_LOGITS = 32_000_000  # floats of logits per scoring forward: bounds memory on long right contexts


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


def _token_logprobs(model, ids: torch.Tensor, keep: int) -> torch.Tensor:
    """log p(ids[:, t] | ids[:, :t]) for the last `keep` tokens of each row -> (batch, keep)."""
    kwargs = {}
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = keep + 1  # only the positions we score: bounded memory
    logits = model(input_ids=ids, **kwargs).logits[:, -(keep + 1):-1].float()
    logp = logits.log_softmax(-1)
    return logp.gather(-1, ids[:, -keep:].unsqueeze(-1)).squeeze(-1)


def _prefix_scores(model, prefix: torch.Tensor, chunk: int = 256) -> tuple[float, torch.Tensor]:
    """One forward of start + left context -> (its log-likelihood, the next-token log-probs)."""
    logits = model(input_ids=prefix).logits[0]
    total = 0.0
    for i in range(0, logits.shape[0] - 1, chunk):  # chunked: a full-vocab log-softmax per position is big
        lp = logits[i:i + chunk].float().log_softmax(-1)
        targets = prefix[0, i + 1:i + 1 + chunk]
        total += float(lp[: len(targets)].gather(-1, targets.unsqueeze(-1)).sum())
    return total, logits[-1].float().log_softmax(-1).cpu()


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
    with torch.inference_mode():
        prefix = torch.tensor([start + left_ids], device=device)
        context_lp, next_logp = _prefix_scores(model, prefix)
        vocab = min(len(allowed), next_logp.shape[-1])
        masked = next_logp[:vocab].masked_fill(~allowed[:vocab], -math.inf)
        n = min(max(int(n_candidates), int(top_k)), int(allowed[:vocab].sum()))
        if n == 0:
            raise InputError("This tokenizer has no whole-word tokens to fill the mask with.")
        left_lp, cand = torch.topk(masked, n)  # sorted: index i is left-context rank i + 1
        keep = 1 + len(right_ids)
        rows = torch.tensor([start + left_ids + [int(c)] + right_ids for c in cand.tolist()], device=device)
        chunk = max(1, MAX_LOGITS // (keep * next_logp.shape[-1]))  # one forward unless the right side is long
        parts = []
        for i in range(0, n, chunk):
            budget.check(f"scored {i} of {n} candidates", "Shorten the text after the mask.")
            parts.append(_token_logprobs(model, rows[i:i + chunk], keep).cpu())
        tail = torch.cat(parts)  # (n, keep): the candidate, then each right-context token
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
