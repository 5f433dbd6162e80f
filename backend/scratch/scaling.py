"""Scaling laws measured here (the book's chapter 11): a family of tiny GPTs, one recipe, a power law.

Kaplan et al. (2020) found a language model's test loss falls as a power law of its size N
(non-embedding parameters) when data and compute do not hold it back: L(N) = (N_c / N)^alpha,
alpha ~ 0.076. Here every size is the From scratch tab's tiny GPT (`tiny_gpt.py`: the same model
builder, training step and learning-rate schedule), trained on the same shipped text, same
byte tokens, same number of tokens (the RECIPE), so only N changes.

`fit_power_law` fits ln L = ln(N_c) alpha - alpha ln N by least squares, with the fit's covariance:
a 95 % interval on alpha and a 95 % prediction interval for a new size's loss (the line's
uncertainty plus the scatter of single runs). `fit_with_floor` tries L = E + (N_c / N)^alpha (an
irreducible loss E) and `choose_fit` keeps it only where AICc says the data ask for it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Iterator

import numpy as np
import torch

from backend.engines.scratch import corpora, loop, tiny_gpt
from backend.runtime.device import gpu_task

KAPLAN_ALPHA_N = 0.076  # Kaplan et al. 2020, L(N) for non-embedding parameters
# Two-sided 95 % Student t quantiles by degrees of freedom (scipy.stats.t.ppf(0.975, dof); checked in the tests).
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086)


def t975(dof: int) -> float:
    return T975[dof - 1] if 1 <= dof <= len(T975) else 1.96


@dataclass(frozen=True)
class Recipe:
    """What every size shares: the text, the tokens, the steps, the batch, the schedule, the seed."""
    corpus: tuple[str, ...] = ("tokenizers", "glossary", "sentences")  # every shipped text, 205 KB
    steps: int = 400
    batch: int = 16
    context: int = 32
    learning_rate: float = 2e-3
    eval_every: int = 50
    val_windows: int = 256  # 8,192 validation tokens, the same windows for every size
    heads: int = 4
    seed: int = 0

    @property
    def tokens(self) -> int:
        return self.steps * self.batch * self.context


RECIPE = Recipe()
# (layers, width): non-embedding parameters 12.8k ... 793k (62x)
FAMILY = ((1, 32), (2, 48), (2, 64), (3, 96), (4, 128))


def non_embedding(model) -> int:
    """Kaplan's N: every parameter but the token and position embeddings (tied LM head included there)."""
    emb = model.transformer.wte.weight.numel() + model.transformer.wpe.weight.numel()
    return tiny_gpt.param_count(model) - emb


def non_embedding_estimate(layers: int, width: int) -> int:
    """12 w^2 + 13 w per block (q, k, v, output, the 4w MLP, two layer norms) + the final norm (2 w)."""
    return layers * (12 * width * width + 13 * width) + 2 * width


# ---------------------------------------------------------------- the fits

def fit_power_law(n, loss, floor: float = 0.0) -> dict:
    """ln(L - floor) = b0 + b1 ln N by least squares: alpha = -b1, N_c = exp(b0 / alpha); the 95 %
    interval on alpha from the fit's covariance (Student t, n - 2 degrees of freedom)."""
    x = np.log(np.asarray(n, dtype=float))
    y = np.log(np.asarray(loss, dtype=float) - floor)
    if len(x) < 3:
        raise ValueError("a power-law fit with an interval needs at least 3 sizes")
    design = np.stack([np.ones_like(x), x], axis=1)
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ beta
    dof = len(x) - 2
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.inv(design.T @ design)
    alpha, se = -float(beta[1]), math.sqrt(float(cov[1, 1]))
    t = t975(dof)
    return {"alpha": alpha, "alpha_low": alpha - t * se, "alpha_high": alpha + t * se, "alpha_se": se,
            "n_c": math.exp(beta[0] / alpha) if alpha != 0 else None, "floor": floor, "dof": dof,
            "residual_sd": math.sqrt(s2), "beta": [float(b) for b in beta], "cov": cov.tolist(),
            "sse_loss": float(((np.exp(design @ beta) - np.exp(y)) ** 2).sum())}


def predict(fit: dict, n: float) -> dict:
    """The fitted loss at size n and its 95 % prediction interval (a single new run, not the mean)."""
    x0 = np.array([1.0, math.log(n)])
    cov = np.array(fit["cov"])
    s2 = fit["residual_sd"] ** 2
    mean = float(x0 @ np.array(fit["beta"]))
    half = t975(fit["dof"]) * math.sqrt(s2 + float(x0 @ cov @ x0))
    f = fit["floor"]
    return {"loss": math.exp(mean) + f, "low": math.exp(mean - half) + f, "high": math.exp(mean + half) + f}


def fit_with_floor(n, loss, grid: int = 200) -> dict:
    """L = E + (N_c / N)^alpha: the floor E searched on a grid below the lowest loss, each E fitted
    as a power law of L - E; the E with the least squared error in L."""
    low = float(min(loss))
    best = None
    for e in np.linspace(0.0, low * 0.98, grid):
        fit = fit_power_law(n, loss, floor=float(e))
        if best is None or fit["sse_loss"] < best["sse_loss"]:
            best = fit
    best["dof"] = max(1, len(loss) - 3)  # E was fitted too
    return best


def aicc(sse: float, n: int, k: int) -> float:
    if n - k - 1 <= 0 or sse <= 0:
        return float("inf") if n - k - 1 <= 0 else -float("inf")
    return n * math.log(sse / n) + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def choose_fit(n, loss) -> dict:
    """The plain power law, unless the floor's fit lowers AICc by more than 2 (the data ask for E)."""
    plain = fit_power_law(n, loss)
    floored = fit_with_floor(n, loss)
    a_plain, a_floor = aicc(plain["sse_loss"], len(loss), 2), aicc(floored["sse_loss"], len(loss), 3)
    use_floor = a_floor < a_plain - 2 and floored["floor"] > 0
    chosen = floored if use_floor else plain
    return {**chosen, "model": "E + (N_c/N)^alpha" if use_floor else "(N_c/N)^alpha",
            "aicc": {"plain": a_plain, "with_floor": a_floor}, "floor_fit": {k: floored[k] for k in
                                                                           ("alpha", "floor", "n_c", "sse_loss")}}


# ---------------------------------------------------------------- training one size

@gpu_task(duration=60)
def val_task(model, windows) -> float:
    with loop.one_thread():
        return tiny_gpt.val_loss(model, windows)


def data_for(recipe: Recipe) -> tiny_gpt.Data:
    body = "\n".join(corpora.shipped(name) for name in recipe.corpus)
    return tiny_gpt.Data.split(tiny_gpt.encode(tiny_gpt.byte_tokenizer(), body), recipe.context)


def train_size_iter(layers: int, width: int, recipe: Recipe | None = None, data: tiny_gpt.Data | None = None,
                    check=None) -> Iterator[dict]:
    """Train one size with the recipe, yielding its validation loss every `eval_every` steps against
    the tokens seen and the compute spent (C = 6 N D, Kaplan's estimate), then {"run": ...}.
    `check(label)` may raise to stop (the request's budget). Not `loop.run`: no pass at step 0, one
    after every chunk with its tokens and compute, and no Stop flag; the steps are loop.train_chunk's."""
    recipe = recipe or RECIPE
    data = data or data_for(recipe)
    model = tiny_gpt.build_model(256, layers, recipe.heads, width, recipe.context, recipe.seed)
    n = non_embedding(model)
    gen = torch.Generator().manual_seed(recipe.seed)
    windows = data.windows(data.val, recipe.val_windows, torch.Generator().manual_seed(recipe.seed + 1))
    bundle = (model, loop.optimizer(model, recipe.learning_rate))
    factor = loop.schedule(recipe.steps)
    per_step = recipe.batch * recipe.context
    evals, step, t0 = [], 0, time.perf_counter()
    while step < recipe.steps:
        if check is not None:
            check(f"{layers} layers x {width}: {step} of {recipe.steps} steps")
        k = min(recipe.eval_every, recipe.steps - step)
        batches = [data.windows(data.train, recipe.batch, gen) for _ in range(k)]
        bundle, losses = tiny_gpt.train_chunk(bundle, batches, [recipe.learning_rate * factor(step + i) for i in range(k)])
        step += len(losses)
        evals.append({"step": step, "tokens": step * per_step, "compute": 6.0 * n * step * per_step,
                      "train_loss": round(losses[-1], 4), "val_loss": round(val_task(bundle[0], windows), 4)})
        yield evals[-1]
    yield {"run": {"layers": layers, "width": width, "heads": recipe.heads, "non_embedding": n,
                   "parameters": tiny_gpt.param_count(bundle[0]), "val_loss": evals[-1]["val_loss"], "evals": evals,
                   "seconds": round(time.perf_counter() - t0, 2)}}


def train_size(layers: int, width: int, recipe: Recipe | None = None, data: tiny_gpt.Data | None = None,
               check=None) -> dict:
    """`train_size_iter` to the end -> the run."""
    for row in train_size_iter(layers, width, recipe, data, check):
        if "run" in row:
            return row["run"]
    raise RuntimeError("training ended without a result")


def train_family(sizes=None, recipe: Recipe | None = None, say=print, check=None) -> dict:
    """Every size with the same recipe and data (by default FAMILY and RECIPE as they are now): the runs."""
    sizes, recipe = sizes or FAMILY, recipe or RECIPE
    data = data_for(recipe)
    runs = []
    for layers, width in sizes:
        runs.append(train_size(layers, width, recipe, data, check=check))
        r = runs[-1]
        say(f"        {layers} layers x {width}: N = {r['non_embedding']:,}, val loss {r['val_loss']:.4f} "
            f"({r['seconds']:.1f} s)")
    return {"recipe": asdict(recipe), "runs": runs,
            "unigram_entropy": round(tiny_gpt.unigram_entropy(data.val), 4),
            "seconds": round(sum(r["seconds"] for r in runs), 1)}
