"""Decode by hand: the learner picks each next token; the model says how likely that path is.

Model-level functions (tests drive them with tiny models; `api.decode_by_hand` is the
role-level entry point):

    ids = parse_path(tokenizer, [" the", 3], vocab_size)     # ids or single-token strings
    out = by_hand(model, tokenizer, prompt, ids, top_k=10, action="step" | "greedy" | "sample", n=4, seed=0)

Every number comes from one plain teacher-forced forward of prompt + path (`score_path`): each
chosen token's log-prob under the model's own (unwarped) distribution, its rank (1 = the most
likely), and the top-k candidates for the next token. Greedy's path for the same number of new
tokens is scored by the same function, so a hand path that happens to be greedy's gets exactly
greedy's log-prob. Continuing ("greedy" / "sample") runs a KV-cached loop: argmax, or a draw from
the full softmax with a seeded generator (no temperature, no cut).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from typing import Any

import torch

from backend.engines.generation.generate import context_limit
from backend.engines.generation.result import TokenText, rounded
from backend.engines.generation.setup import build_prompt
from backend.engines.generation.settings import DecodeSettings
from backend.runtime import budget as budgets
from backend.runtime import json_input
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int, one_of, kind

ACTIONS = ("step", "greedy", "sample")
MAX_PATH = 64  # tokens chosen so far (hand + continued); every step re-scores the whole path
MAX_CONTINUE = 32  # tokens one "continue" adds
MAX_TOP_K = 50
MAX_TOKEN_CHARS = 200


# ----------------------------------------------------------------------------- input


def parse_path(tokenizer, path: Any, vocab_size: int) -> list[int]:
    """A path -> token ids. Accepts None/"" (empty), a list (or its JSON text) of ids (numbers) and/or
    token strings; a string must be exactly one token of this tokenizer (" the", or its raw piece "Ġthe")."""
    if path is None or (isinstance(path, str) and not path.strip()):
        return []
    if isinstance(path, str):
        try:
            path = json_input.loads(path, "path")
        except json.JSONDecodeError:
            raise InputError('path must be a JSON list of token ids or token strings, e.g. [504, " the"].') from None
    if isinstance(path, tuple):
        path = list(path)
    if not isinstance(path, list):
        raise InputError(f"path must be a list of token ids or token strings, got {kind(path)}.")
    if len(path) > MAX_PATH:
        raise InputError(f"path has {len(path)} tokens; decode by hand takes at most {MAX_PATH}. "
                         "Start again from a longer prompt instead.")
    return [_one_id(tokenizer, item, i + 1, vocab_size) for i, item in enumerate(path)]


def _one_id(tokenizer, item: Any, step: int, vocab_size: int) -> int:
    if isinstance(item, str):  # always a token's text ("7" is the token 7, not id 7)
        return token_id(tokenizer, item, f"path step {step}")
    if isinstance(item, (list, dict)) or item is None:
        raise InputError(f"path step {step} is {kind(item)}; give a token id or a token string.")
    return as_int(f"path step {step}", item, "a token id (a whole number)", lo=0, hi=vocab_size - 1)


def token_id(tokenizer, text: str, what: str = "token") -> int:
    """The id of a typed token: the text must encode to exactly one token (or be a raw piece)."""
    if not text or len(text) > MAX_TOKEN_CHARS:
        raise InputError(f"{what}: type one token (1 to {MAX_TOKEN_CHARS} characters).")
    if any("\ud800" <= c <= "\udfff" for c in text):  # a lone surrogate: no tokenizer takes it
        raise InputError(f"{what} holds a lone surrogate (half of a character, not text); type one token.")
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) == 1:
        return int(ids[0])
    raw = tokenizer.convert_tokens_to_ids(text)
    if isinstance(raw, int) and raw != tokenizer.unk_token_id and raw is not None:
        return int(raw)
    pieces = [tokenizer.decode([i]) for i in ids[:6]]
    raise InputError(f"{what}: {text!r} is {len(ids)} tokens for this model ({pieces}), not one; "
                     "pick a candidate from the table or type a single token.")


# ----------------------------------------------------------------------------- scoring


def score_path(model, ids: Sequence[int], prompt_len: int, top_k: int) -> dict:
    """One teacher-forced forward of `ids`: for each token after the prompt its log-prob and
    rank, the top-k at each of those steps, and the top-k for the next token (after the last)."""
    x = torch.tensor([list(ids)], device=model.device)
    keep = len(ids) - prompt_len + 1  # positions prompt_len-1 .. end predict the path and the next token
    with torch.inference_mode():
        logits = _forward(model, x, keep).logits[0, -keep:].float()
    logp = torch.log_softmax(logits, dim=-1)
    target = torch.tensor(list(ids[prompt_len:]), device=logp.device, dtype=torch.long)
    chosen = logp[:-1].gather(-1, target[:, None])[:, 0] if len(target) else logp.new_zeros(0)
    ranks = (logp[:-1] > chosen[:, None]).sum(-1) + 1 if len(target) else chosen.long()
    vals, top = logp.topk(min(top_k, logp.shape[-1]), dim=-1)
    return {"logprob": chosen.tolist(), "rank": ranks.tolist(), "top_ids": top.tolist(), "top_logp": vals.tolist()}


def _forward(model, x: torch.Tensor, keep: int, **kwargs):
    """The model's forward, computing the LM head only for the last `keep` positions where it can."""
    try:
        return model(input_ids=x, logits_to_keep=keep, **kwargs)
    except TypeError:  # an architecture without logits_to_keep: all positions
        return model(input_ids=x, **kwargs)


def continue_path(model, ids: Sequence[int], n: int, eos: set[int], seed: int | None = None) -> list[int]:
    """Up to `n` tokens after `ids`: argmax (seed None) or a draw from the model's full softmax
    with a generator seeded by `seed`; stops after an EOS or when the time budget runs out."""
    gen = None
    if seed is not None:
        gen = torch.Generator(device="cpu").manual_seed(int(seed))
    out: list[int] = []
    past = None
    x = torch.tensor([list(ids)], device=model.device)
    with torch.inference_mode():
        for _ in range(n):
            if out and budgets.expired():
                break
            res = _forward(model, x, 1, past_key_values=past, use_cache=True)
            past = res.past_key_values
            logits = res.logits[0, -1].float()
            if gen is None:
                nxt = int(logits.argmax())
            else:
                probs = torch.softmax(logits, dim=-1).cpu()
                nxt = int(torch.multinomial(probs, 1, generator=gen))
            out.append(nxt)
            if nxt in eos:
                break
            x = torch.tensor([[nxt]], device=model.device)
    return out


# ----------------------------------------------------------------------------- one request


def eos_ids(model, tokenizer) -> set[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def check_request(top_k: Any, action: Any, n: Any, seed: Any) -> tuple[int, str, int, int | None]:
    """The knobs, checked before any model loads."""
    top_k = as_int("top_k", 10 if top_k is None else top_k, lo=1, hi=MAX_TOP_K)
    action = one_of("action", action, ACTIONS, default="step")
    n = as_int("n", 8 if n is None else n, lo=1, hi=MAX_CONTINUE)
    if seed is None or (isinstance(seed, str) and not seed.strip()):
        seed = random.randrange(2**31) if action == "sample" else None
    else:
        seed = as_int("seed", seed, lo=0, hi=2**63 - 1)
    return top_k, action, n, seed


def by_hand(model, tokenizer, prompt: str, path: Any = None, top_k: Any = 10, action: Any = "step", n: Any = 8,
            seed: Any = None, chat_template: bool = False) -> dict:
    """The path so far (plus `n` continued tokens for "greedy" / "sample"), scored; see the module."""
    top_k, action, n, seed = check_request(top_k, action, n, seed)
    vocab = int(model.get_output_embeddings().weight.shape[0])
    ids = parse_path(tokenizer, path, vocab)
    # Room for the path after the prompt: MAX_PATH (+ a continuation), or half the context of a model
    # whose window is shorter (a tiny GPT trained in From scratch reads 64 tokens).
    limit = context_limit(model)
    most = min(MAX_PATH, max(1, limit // 2))
    settings = DecodeSettings(max_new_tokens=min(MAX_PATH + MAX_CONTINUE, max(1, limit // 2)),
                              chat_template=bool(chat_template))
    if len(ids) > most:
        raise InputError(f"path has {len(ids)} tokens; this model reads {limit} tokens in all, so decode by hand "
                         f"takes at most {most} after the prompt.")
    prompt_text, prompt_ids, warnings = build_prompt(tokenizer, prompt, settings, limit)
    eos = eos_ids(model, tokenizer)
    added: list[int] = []
    if action != "step":
        if ids and ids[-1] in eos:
            warnings.append("The path ends with the end-of-text token: nothing follows it.")
        else:
            room = most - len(ids)
            if room < 1:
                raise InputError(f"The path already has {most} tokens, the most decode by hand takes"
                                 + (f" on a model that reads {limit} tokens." if most < MAX_PATH else "."))
            added = continue_path(model, prompt_ids + ids, min(n, room), eos, seed if action == "sample" else None)
    full = ids + added
    scored = score_path(model, prompt_ids + full, len(prompt_ids), top_k)
    budgets.check(f"the path of {len(full)} tokens was scored", "Use a shorter path.")
    greedy = continue_path(model, prompt_ids, len(full), eos) if full else []
    g_scored = score_path(model, prompt_ids + greedy, len(prompt_ids), 1)
    tok = TokenText(tokenizer)
    origin = ["path"] * len(ids) + [action] * len(added)
    steps = _steps(full, scored, origin, top_k, tok)
    out = {
        "prompt_text": prompt_text, "prompt_token_ids": prompt_ids,
        "path_token_ids": full, "text": tokenizer.decode(full, skip_special_tokens=True),
        "steps": steps, "path_logprob": rounded(sum(scored["logprob"]), 6),
        "greedy": {"token_ids": greedy, "tokens": [tok(i) for i in greedy],
                   "text": tokenizer.decode(greedy, skip_special_tokens=True),
                   "logprob": rounded(sum(g_scored["logprob"]), 6), "n_tokens": len(greedy)},
        "candidates": _candidates(scored["top_ids"][-1], scored["top_logp"][-1], tok),
        "left_top_k": [s["step"] for s in steps if not s["in_top_k"]],
        "action": action, "added": len(added), "seed": seed if action == "sample" else None, "top_k": top_k,
        "ended_with_eos": bool(full and full[-1] in eos), "warnings": warnings,
    }
    out["summary"] = summary(out)
    return out


def _steps(full: list[int], scored: dict, origin: list[str], top_k: int, tok: TokenText) -> list[dict]:
    return [{"step": i + 1, "token_id": t, "token": tok(t), "logprob": rounded(scored["logprob"][i], 6),
             "prob": _prob(scored["logprob"][i]), "rank": int(scored["rank"][i]),
             "in_top_k": int(scored["rank"][i]) <= top_k, "by": origin[i]}
            for i, t in enumerate(full)]


def _candidates(ids: list[int], logps: list[float], tok: TokenText) -> list[dict]:
    return [{"rank": r + 1, "token_id": int(i), "token": tok(i), "prob": _prob(lp), "logprob": rounded(lp, 6)}
            for r, (i, lp) in enumerate(zip(ids, logps))]


def _prob(logp: float) -> float:
    p = math.exp(logp)
    return float(f"{p:.6g}")


def summary(out: dict) -> str:
    """One line: the path's log-prob next to greedy's, and where the path left the top-k."""
    n = len(out["path_token_ids"])
    if not n:
        return "No token chosen yet: pick one from the table, or continue greedily or by sampling."
    g = out["greedy"]
    line = (f"path log-prob {out['path_logprob']:.3f} over {n} tokens; greedy's {g['logprob']:.3f} over "
            f"{g['n_tokens']} tokens (difference {out['path_logprob'] - g['logprob']:+.3f}).")
    left = out["left_top_k"]
    if not left:
        return line + f" Every chosen token was in the model's top {out['top_k']}."
    first = out["steps"][left[0] - 1]
    more = f" (and at {len(left) - 1} more step{'s' if len(left) > 2 else ''})" if len(left) > 1 else ""
    return line + (f" The path left the top {out['top_k']} at step {left[0]}: {first['token']!r} was the model's "
                   f"choice #{first['rank']}{more}.")
