"""A run as plain data: the result type, the per-output summary and the book's step table.

Everything here works on host lists (what the recorders' `finalize` and `score_sequence`
return), so building the tables never touches the model.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from backend.engines.generation.filters import distinct_n, perplexity


@dataclass
class DecodeResult:
    """One run, as plain data. `to_dict()` is the `/decode` API payload (less `model`)."""

    text: str  # the first (best) output's generated text
    prompt_text: str  # what the model saw (after chat template and truncation)
    prompt_token_ids: list[int]
    outputs: list[dict]  # one per returned sequence: text, token_ids, tokens, logprob, perplexity, distinct-n
    steps: list[dict]  # per-step table for the first output
    sequence_logprob: float
    perplexity: float
    distinct_2: float
    distinct_3: float
    n_new_tokens: int
    generate_seconds: float
    seconds: float
    tokens_per_s: float
    finish_reason: str  # eos | length | stopped
    settings: dict
    label: str
    beam_tree: dict | None = None
    warnings: list[str] = field(default_factory=list)
    truncated_prompt: bool = False
    record_bytes: int = 0  # memory the per-step record held at the end of generation

    def to_dict(self) -> dict:
        return jsonable(asdict(self))


def jsonable(obj: Any) -> Any:
    """Floats that JSON can carry (nan/inf -> None), numpy scalars to Python."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


class TokenText:
    """Display text of single tokens, decoded once each (" the", "\\n")."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.cache: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        token_id = int(token_id)
        if token_id not in self.cache:
            self.cache[token_id] = self.tokenizer.decode([token_id])
        return self.cache[token_id]


def rounded(x: float, nd: int = 6) -> float:
    return float(round(float(x), nd))


def prob(logp: float | None) -> float:
    """exp(log-prob) to 6 significant digits (a rare token's 3e-9 stays 3e-9, not 0); 0 for a
    token a cut removed (-inf)."""
    return float(f"{math.exp(logp):.6g}") if logp is not None and logp > -1e30 else 0.0


def unscored_summary(ids: list[int], found_eos: bool, tok: TokenText, tokenizer) -> dict:
    """A returned sequence the request had no time left to score: its text, no made-up numbers."""
    out = output_summary(ids, [], found_eos, tok, tokenizer)
    out.update(logprob=None, perplexity=None, scored=False)
    return out


def output_summary(ids: list[int], logps: list[float], found_eos: bool, tok: TokenText, tokenizer) -> dict:
    """One returned sequence: its text, tokens, log-prob, perplexity and distinct-n."""
    total = float(sum(logps))
    return {
        "text": tokenizer.decode(ids, skip_special_tokens=True),
        "token_ids": ids,
        "tokens": [tok(t) for t in ids],
        "logprob": rounded(total, 4),
        "perplexity": rounded(perplexity(total, len(ids)), 4),
        "n_tokens": len(ids),
        "distinct_2": rounded(distinct_n(ids, 2), 4),
        "distinct_3": rounded(distinct_n(ids, 3), 4),
        "ended_with_eos": found_eos,
    }


def steps_from_record(rec: dict, row: int, n: int, tok: TokenText, sampling: bool) -> list[dict]:
    """The book's step table from the taps' record: candidates, chosen token, rank, prob."""
    steps = []
    for t in range(n):
        cid, lp_raw, rank, lp_temp, lp_final = rec["chosen"][row][t]
        cands = []
        for j, token_id in enumerate(rec["cand_ids"][row][t]):
            c = {"token_id": int(token_id), "token": tok(token_id), "prob": prob(rec["cand_raw"][row][t][j])}
            if sampling:
                c["prob_temperature"] = prob(rec["cand_temp"][row][t][j])
                c["prob_after_cut"] = prob(rec["cand_final"][row][t][j])
            cands.append(c)
        step = {
            "step": t,
            "token_id": int(cid),
            "token": tok(cid),
            "logprob": rounded(lp_raw),
            "prob": prob(lp_raw),
            "rank": int(rank),
            "entropy": rounded(rec["entropy_raw"][row][t], 4),
            "candidates": cands,
        }
        if sampling:
            step["prob_temperature"] = prob(lp_temp)
            step["prob_after_cut"] = prob(lp_final)
            step["entropy_temperature"] = rounded(rec["entropy_temp"][row][t], 4)
            step["survivors"] = int(rec["survivors"][row][t])
        steps.append(step)
    return steps


def steps_from_scores(ids: list[int], scored: dict, tok: TokenText) -> list[dict]:
    """The step table of a beam output, from `score_sequence`'s forward pass."""
    steps = []
    for t, token_id in enumerate(ids):
        lp = scored["logprob"][t]
        steps.append(
            {
                "step": t,
                "token_id": int(token_id),
                "token": tok(token_id),
                "logprob": rounded(lp),
                "prob": prob(lp),
                "rank": int(scored["rank"][t]),
                "entropy": rounded(scored["entropy"][t], 4),
                "candidates": [
                    {"token_id": int(c), "token": tok(c), "prob": prob(v)}
                    for c, v in zip(scored["top_ids"][t], scored["top_logp"][t])
                ],
            }
        )
    return steps
