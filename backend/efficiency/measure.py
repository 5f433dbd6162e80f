"""What the Efficiency panel measures, on any model pair: greedy runs, perplexity, agreement.

Plain functions of (model, tokenizer, data): unit tests call them on tiny models; `api.py`
runs them on the served fp32 model and its int8 copy, interleaved (A, B, A, B...) so a noisy,
shared machine slows both alike and the ratio stays honest.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from backend.runtime import budget

DATA_DIR = Path(__file__).resolve().parents[2] / "assets" / "data" / "efficiency"


def load_texts() -> list[str]:
    """The 20 shipped paragraphs for perplexity (assets/data/efficiency/texts.jsonl)."""
    return [json.loads(line)["text"] for line in (DATA_DIR / "texts.jsonl").read_text("utf-8").splitlines() if line.strip()]


def load_topics() -> list[str]:
    """Each shipped text's topic (its zero-shot label in the encoder comparison)."""
    return [json.loads(line)["topic"] for line in (DATA_DIR / "texts.jsonl").read_text("utf-8").splitlines() if line.strip()]


def load_prompts() -> list[str]:
    """The 20 shipped prompts for greedy agreement (assets/data/efficiency/prompts.jsonl)."""
    return [json.loads(line)["prompt"] for line in (DATA_DIR / "prompts.jsonl").read_text("utf-8").splitlines() if line.strip()]


# ---------------------------------------------------------------------------- greedy


@dataclass
class GreedyRun:
    ids: list[int]  # the new tokens only
    seconds: float

    @property
    def tokens_per_s(self) -> float:
        return len(self.ids) / self.seconds if self.seconds > 0 else 0.0


def greedy(model, tokenizer, prompt: str, new_tokens: int) -> GreedyRun:
    """Plain `generate` with greedy search (stops at EOS like the Decoding tab does)."""
    device = next(model.parameters()).device
    enc = tokenizer(prompt, return_tensors="pt").to(device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        start = time.perf_counter()
        out = model.generate(**enc, do_sample=False, num_beams=1, max_new_tokens=new_tokens, pad_token_id=pad,
                             temperature=None, top_p=None, top_k=None)
        seconds = time.perf_counter() - start
    return GreedyRun(out[0, enc["input_ids"].shape[1]:].tolist(), seconds)


def first_divergence(a: Sequence[int], b: Sequence[int]) -> int | None:
    """Index of the first token where two greedy outputs differ (a shorter one differs where it
    ends); None when they are identical."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def agrees(a: Sequence[int], b: Sequence[int], first: int) -> bool:
    """Are the first `first` tokens identical (both ending before `first` at the same point counts)?"""
    return list(a[:first]) == list(b[:first])


def agreement(runs_a: Sequence[Sequence[int]], runs_b: Sequence[Sequence[int]], first: int) -> int:
    """How many prompts' outputs agree on their first `first` tokens."""
    if len(runs_a) != len(runs_b):
        raise ValueError(f"{len(runs_a)} outputs against {len(runs_b)}: compare the same prompts.")
    return sum(agrees(a, b, first) for a, b in zip(runs_a, runs_b))


def compare_greedy(models: dict, tokenizer, prompts: Sequence[str], new_tokens: int, min_timed: int = 3,
                   on_step=None) -> dict:
    """Greedy on every prompt with every model, interleaved per prompt.

    Returns {name: {"outputs": [[ids]...], "tokens_per_s": [per run]}}; with fewer prompts
    than `min_timed`, prompts are cycled for extra timed runs (outputs keep one per prompt).
    One short warm-up call per model first, so no run pays one-time costs.
    """
    for model in models.values():
        greedy(model, tokenizer, prompts[0], 2)
    out = {name: {"outputs": [], "tokens_per_s": []} for name in models}
    runs = max(len(prompts), min_timed)
    for i in range(runs):
        prompt = prompts[i % len(prompts)]
        for name, model in models.items():
            budget.check(f"{i} of {runs} greedy runs", "Choose fewer prompts or fewer new tokens.")
            run = greedy(model, tokenizer, prompt, new_tokens)
            if i < len(prompts):
                out[name]["outputs"].append(run.ids)
            if run.ids:
                out[name]["tokens_per_s"].append(run.tokens_per_s)
        if on_step is not None:
            on_step(i + 1, runs)
    return out


def median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None


# ---------------------------------------------------------------------------- perplexity


def nll_from_logits(logits: torch.Tensor, ids: torch.Tensor) -> tuple[float, int]:
    """(sum of -log p(token | prefix), count) for one sequence: logits (T, V) predict ids[1:]."""
    logp = torch.log_softmax(logits[:-1].double(), dim=-1)
    target = ids[1:].long()
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return float(nll.sum()), int(target.numel())


PERPLEXITY_MAX_TOKENS = 512  # a text's tokens read for its perplexity (longer texts are cut)


def perplexity(model, tokenizer, texts: Sequence[str], max_tokens: int = PERPLEXITY_MAX_TOKENS) -> dict:
    """Token-weighted perplexity exp(total NLL / total predicted tokens) over `texts`, and per text."""
    device = next(model.parameters()).device
    total, count, per_text = 0.0, 0, []
    with torch.inference_mode():
        for i, text in enumerate(texts):
            budget.check(f"perplexity of {i} of {len(texts)} texts", "Choose fewer texts.")
            ids = tokenizer(text, return_tensors="pt", truncation=True, max_length=max_tokens)["input_ids"].to(device)
            if ids.shape[1] < 2:
                per_text.append(None)
                continue
            logits = model(input_ids=ids).logits[0].float()
            nll, n = nll_from_logits(logits, ids[0])
            total, count = total + nll, count + n
            per_text.append(math.exp(nll / n))
    return {"perplexity": math.exp(total / count) if count else None, "tokens": count, "per_text": per_text}


# ---------------------------------------------------------------------------- encoder labels


def labels_and_seconds(model, tokenizer, texts: Sequence[str], descriptions: dict[str, str]) -> tuple[list[str], np.ndarray, float]:
    """The embedding-similarity classifier of the Pipelines tab on `texts`: top label per text,
    the cosine matrix, and the seconds it took."""
    from backend.engines.classify.similarity import classify_by_similarity

    start = time.perf_counter()
    results = classify_by_similarity(model, tokenizer, list(texts), descriptions)
    seconds = time.perf_counter() - start
    labels = list(descriptions)
    cos = np.array([[r["cosines"][r["labels"].index(l)] for l in labels] for r in results])
    return [r["labels"][0] for r in results], cos, seconds
