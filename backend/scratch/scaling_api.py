"""Chapter 11's scaling law, served: `/scaling_law` (the default family, built once at set-up, and its
fit) and `/scaling_add` (one more size trained now with the same recipe, placed against the line).

The family is built by a fixed amount of work (`scaling.RECIPE` x `scaling.FAMILY`) by
`python -m backend.scratch.scaling_build` (`make build`), written atomically under a build key in
the model cache. Where the cache lacks it (a Space that skipped the build, a fresh test cache) the
copy shipped in assets/data/scratch/scaling_family.json, made by the same command on this kind
of machine, is read instead, and the result says which.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

from backend.engines.scratch import corpora, loop, tiny_gpt
from backend.hub import conversion
from backend.hub.code_keys import code_salt, normalised
from backend.runtime import budget
from backend.runtime.errors import InputError, LabError
from backend.runtime.validation import as_int
from backend.scratch import scaling

RECIPE_NAME = "scaling-family"
FILE = "family.json"
SHIPPED = Path(corpora.SCRATCH_DIR) / "scaling_family.json"
CODE = ("backend.scratch.scaling", __name__)  # the recipe and the build: with the engine modules they import, keyed
HEADROOM = 0.8  # an added size may use this share of the request's budget
WIDTH_LIMITS, LAYER_LIMITS = (16, 256), (1, 6)


def _identity() -> dict:
    return {"recipe": asdict(scaling.RECIPE), "family": [list(s) for s in scaling.FAMILY]}


def _source(module) -> bytes:
    """A module's code as the build key reads it: as Python reads it (`code_keys.normalised`: comments,
    docstrings and layout are not what it trains), with its package's path written one way (nor is the location of
    the code: the key spells the package `backend.scratch` wherever the code lives)."""
    text = normalised(inspect.getsource(module))
    return text.replace("backend.engines.scratch", "backend.scratch").replace("backend/engines/scratch",
                                                                              "backend/scratch").encode()


def build_key() -> str:
    """Changes with the recipe, the sizes, the text, the tiny GPT's code and loop, and the code of the recipe and
    its build (`CODE`, code_keys.py) (any of them rebuilds; where the code lives does not, see `_source`)."""
    text = "\n".join(corpora.shipped(name) for name in scaling.RECIPE.corpus)
    settings = json.dumps(_identity(), sort_keys=True).encode() + hashlib.sha256(text.encode()).digest() + \
        _source(tiny_gpt) + _source(loop) + code_salt(RECIPE_NAME, CODE)
    return conversion.build_key(RECIPE_NAME, [], Path(corpora.SCRATCH_DIR), settings)


def cached_path(root: Path | None = None) -> Path:
    return conversion.trained_dir(RECIPE_NAME, build_key(), root) / FILE


def build(say=print, root: Path | None = None) -> tuple[Path, bool]:
    """Train the default family once into the cache (skipped at once when it is there)."""
    target = cached_path(root).parent

    def work(tmp: Path) -> None:
        with budget.detached():
            family = scaling.train_family(say=say)
        (tmp / FILE).write_text(json.dumps({**family, **_identity(), "key": build_key()}, indent=1))

    return target / FILE, conversion.write_once(target, work)


def load_family(root: Path | None = None) -> dict:
    """The default family's runs: the cache's, else the shipped copy made with the same recipe."""
    path = cached_path(root)
    if path.exists():
        return {**json.loads(path.read_text()), "source": "built on this machine at set-up (make build)"}
    if SHIPPED.exists():
        shipped = json.loads(SHIPPED.read_text())
        if {k: shipped.get(k) for k in ("recipe", "family")} == json.loads(json.dumps(_identity())):
            return {**shipped, "source": "the copy shipped with the app (made by the same build on a 2-core CPU); "
                                         "`make build` makes it here"}
    raise LabError("The scaling-law family is not built yet: run `make build` (or `python -m "
                   "backend.scratch.scaling_build`), about 2 minutes on a 2-core CPU.")


def frontier(runs: list[dict]) -> list[dict]:
    """The compute-efficient frontier: at each compute spent, the lowest validation loss any size
    reached by then (Kaplan's L(C), read off the training curves)."""
    points = sorted((e["compute"], e["val_loss"], r["non_embedding"]) for r in runs for e in r["evals"])
    out, best = [], math.inf
    for c, loss, n in points:
        if loss < best:
            best = loss
            out.append({"compute": c, "val_loss": loss, "non_embedding": n})
    return out


def still_learning(runs: list[dict], back: int = 2) -> dict:
    """How much the smallest and the largest size's validation loss fell over their last `back`
    evaluations (nats), and over how many steps: positive means still learning when training stopped."""
    def fall(r):
        ev = r["evals"]
        b = min(back, len(ev) - 1)
        return round(ev[-1 - b]["val_loss"] - ev[-1]["val_loss"], 4), ev[-1]["step"] - ev[-1 - b]["step"]

    (small, _), (big, steps) = fall(runs[0]), fall(runs[-1])
    return {"smallest": small, "largest": big, "steps": steps}


def _band(fit: dict, lo: float, hi: float, points: int = 40) -> list[dict]:
    out = []
    for i in range(points):
        n = math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / (points - 1))
        out.append({"n": n, **scaling.predict(fit, n)})
    return out


def scaling_law() -> dict:
    """`/scaling_law`: the family's runs, the fit of L(N) with its 95 % interval, the prediction band,
    the compute frontier, and how alpha compares with Kaplan's."""
    family = load_family()
    runs = family["runs"]
    n = [r["non_embedding"] for r in runs]
    loss = [r["val_loss"] for r in runs]
    fit = scaling.choose_fit(n, loss)
    plain = scaling.fit_power_law(n, loss)
    k = scaling.KAPLAN_ALPHA_N
    return {"recipe": family["recipe"], "runs": runs, "source": family["source"],
            "build_seconds": family.get("seconds"), "unigram_entropy": family.get("unigram_entropy"),
            "fit": _public(fit), "plain_fit": _public(plain), "kaplan_alpha": k,
            "kaplan_inside": plain["alpha_low"] <= k <= plain["alpha_high"],
            "span": round(max(n) / min(n), 1), "band": _band(fit, min(n) / 3, max(n) * 3),
            "frontier": frontier(runs), "still_learning": still_learning(runs)}


def _public(fit: dict) -> dict:
    keep = ("alpha", "alpha_low", "alpha_high", "alpha_se", "n_c", "floor", "dof", "residual_sd", "model", "aicc",
            "floor_fit", "beta", "cov")
    return {k: fit[k] for k in keep if k in fit}


def _check_size(layers, width) -> tuple[int, int]:
    layers = as_int("layers", layers, lo=LAYER_LIMITS[0], hi=LAYER_LIMITS[1])
    width = as_int("width", width, lo=WIDTH_LIMITS[0], hi=WIDTH_LIMITS[1])
    if width % scaling.RECIPE.heads:
        raise InputError(f"width ({width}) must be a multiple of {scaling.RECIPE.heads} (the recipe's heads).")
    return layers, width


def plan_size(layers, width, family: dict | None = None) -> dict:
    """Seconds the added size should take, at the family's own rate (parameter-tokens a second)."""
    layers, width = _check_size(layers, width)
    family = family or load_family()
    work = sum(r["parameters"] for r in family["runs"]) * scaling.RECIPE.tokens
    rate = work / max(1e-6, sum(r["seconds"] for r in family["runs"]))
    params = tiny_gpt.param_count(tiny_gpt.build_model(256, layers, scaling.RECIPE.heads, width,
                                                       scaling.RECIPE.context, 0))
    seconds = params * scaling.RECIPE.tokens / rate
    limit = budget.default_seconds()
    return {"layers": layers, "width": width, "parameters": params, "seconds": round(seconds, 1),
            "non_embedding": scaling.non_embedding_estimate(layers, width),
            "fits": limit <= 0 or seconds <= HEADROOM * limit, "budget_s": limit}


def scaling_add_iter(layers=3, width=64) -> Iterator[dict]:
    """Train one more size with the family's recipe; yields {"event": "plan" | "eval" | "done"}; the
    result says where its loss lands against the fitted line and its 95 % prediction interval."""
    law = scaling_law()
    plan = plan_size(layers, width)
    if not plan["fits"]:
        raise InputError(f"{plan['layers']} layers x {plan['width']} ({plan['parameters']:,} parameters) would take "
                         f"about {plan['seconds']:.0f} s, over {HEADROOM:.0%} of this server's {plan['budget_s']:g} s "
                         "per request. Choose fewer layers or a smaller width.")
    yield {"event": "plan", **plan}
    for row in scaling.train_size_iter(plan["layers"], plan["width"], check=budget.check):
        if "run" in row:
            yield {"event": "done", "result": place(law, row["run"])}
        else:
            yield {"event": "eval", **row}


def place(law: dict, run: dict) -> dict:
    """Where one run lands: the fit's prediction at its N, the 95 % interval, inside or not, and
    whether its N lies inside the family's range (interpolation) or outside (extrapolation)."""
    pred = scaling.predict(law["fit"], run["non_embedding"])
    ns = [r["non_embedding"] for r in law["runs"]]
    inside = pred["low"] <= run["val_loss"] <= pred["high"]
    return {"run": run, "predicted": pred, "inside": inside, "residual": round(run["val_loss"] - pred["loss"], 4),
            "extrapolated": not min(ns) <= run["non_embedding"] <= max(ns), "fit": law["fit"],
            "family": [{"layers": r.get("layers"), "width": r.get("width"), "non_embedding": r["non_embedding"]}
                       for r in law["runs"]]}


def scaling_add(layers=3, width=64) -> dict:
    result = None
    for ev in scaling_add_iter(layers, width):
        if ev["event"] == "done":
            result = ev["result"]
    return result
