"""The scaling-law fit and the tiny-GPT family (backend/scratch/scaling.py, scaling_api.py): the fit
recovers a known exponent within its interval, the prediction interval covers new draws about as
often as it says, a floor is kept only when the data ask for it, and a size trains with the recipe."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.scratch import scaling, scaling_api


def synthetic(alpha=0.076, n_c=8.8e13, floor=0.0, noise=0.01, seed=0, sizes=(1e4, 3e4, 1e5, 3e5, 1e6, 3e6)):
    rng = np.random.default_rng(seed)
    n = np.array(sizes)
    return n, floor + (n_c / n) ** alpha * np.exp(noise * rng.standard_normal(len(n)))


def test_the_fit_recovers_a_known_exponent_within_its_interval():
    n, loss = synthetic()
    fit = scaling.fit_power_law(n, loss)
    assert fit["alpha_low"] < 0.076 < fit["alpha_high"]
    assert fit["alpha"] == pytest.approx(0.076, abs=0.01)
    assert fit["alpha_high"] - fit["alpha_low"] < 0.03
    exact = scaling.fit_power_law(n, (8.8e13 / n) ** 0.076)  # no noise: exact, a zero-width interval
    assert exact["alpha"] == pytest.approx(0.076, rel=1e-9) and exact["n_c"] == pytest.approx(8.8e13, rel=1e-6)


def test_the_interval_covers_the_true_exponent_about_95_times_in_100():
    hits = 0
    for seed in range(200):
        fit = scaling.fit_power_law(*synthetic(seed=seed, noise=0.02))
        hits += fit["alpha_low"] <= 0.076 <= fit["alpha_high"]
    assert 0.9 <= hits / 200 <= 0.99


def test_the_prediction_interval_covers_a_new_size_about_95_times_in_100():
    hits = 0
    rng = np.random.default_rng(1)
    for seed in range(200):
        fit = scaling.fit_power_law(*synthetic(seed=seed, noise=0.02))
        n_new = 2e5
        new = (8.8e13 / n_new) ** 0.076 * math.exp(0.02 * rng.standard_normal())
        p = scaling.predict(fit, n_new)
        hits += p["low"] <= new <= p["high"]
        assert p["low"] < p["loss"] < p["high"]
    assert 0.9 <= hits / 200 <= 0.995


def test_student_t_quantiles_are_scipys():
    stats = pytest.importorskip("scipy.stats")
    for dof in range(1, 21):
        assert scaling.t975(dof) == pytest.approx(stats.t.ppf(0.975, dof), abs=1e-3)


def test_a_floor_is_kept_only_when_the_data_ask_for_it():
    sizes = tuple(np.geomspace(1e4, 1e7, 10))
    n, loss = synthetic(alpha=0.5, n_c=1e4, floor=1.5, noise=0.001, sizes=sizes)
    with_floor = scaling.choose_fit(n, loss)
    assert with_floor["model"] == "E + (N_c/N)^alpha"
    assert with_floor["floor"] == pytest.approx(1.5, abs=0.05) and with_floor["alpha"] == pytest.approx(0.5, abs=0.05)
    n, loss = synthetic(sizes=sizes)
    assert scaling.choose_fit(n, loss)["model"] == "(N_c/N)^alpha"


def test_the_parameter_count_is_kaplans_non_embedding_n():
    from backend.engines.scratch import tiny_gpt

    model = tiny_gpt.build_model(256, 2, 4, 48, 32, 0)
    assert scaling.non_embedding(model) == scaling.non_embedding_estimate(2, 48)
    ns = [scaling.non_embedding_estimate(l, w) for l, w in scaling.FAMILY]
    assert len(ns) >= 5 and ns == sorted(ns) and ns[-1] / ns[0] >= 30


def test_a_size_trains_with_the_recipe_and_its_curve_falls():
    recipe = scaling.Recipe(steps=20, eval_every=10, batch=4, context=16, val_windows=8)
    rows = list(scaling.train_size_iter(1, 16, recipe))
    run = rows[-1]["run"]
    assert [e["step"] for e in run["evals"]] == [10, 20] and len(rows) == 3
    assert run["evals"][-1]["tokens"] == 20 * 4 * 16
    assert run["evals"][-1]["compute"] == pytest.approx(6 * run["non_embedding"] * 20 * 4 * 16)
    assert run["evals"][-1]["val_loss"] < math.log(256)  # below a uniform guess over bytes
    again = scaling.train_size(1, 16, recipe)  # seeded: the same run again (its seconds aside)
    assert {k: v for k, v in run.items() if k != "seconds"} == {k: v for k, v in again.items() if k != "seconds"}


def test_the_frontier_keeps_the_lowest_loss_reached_at_each_compute():
    runs = [{"non_embedding": 10, "evals": [{"compute": 1, "val_loss": 3.0}, {"compute": 4, "val_loss": 2.5}]},
            {"non_embedding": 40, "evals": [{"compute": 2, "val_loss": 3.2}, {"compute": 8, "val_loss": 2.2}]}]
    assert [(p["compute"], p["val_loss"]) for p in scaling_api.frontier(runs)] == [(1, 3.0), (4, 2.5), (8, 2.2)]


def test_a_run_is_placed_against_the_line_and_its_interval():
    n, loss = synthetic()
    runs = [{"non_embedding": int(x), "val_loss": float(y), "evals": []} for x, y in zip(n, loss)]
    law = {"fit": scaling.fit_power_law(n, loss), "runs": runs}
    on_line = scaling.predict(law["fit"], 2e5)["loss"]
    placed = scaling_api.place(law, {"non_embedding": 200_000, "val_loss": on_line})
    assert placed["inside"] and not placed["extrapolated"] and placed["residual"] == pytest.approx(0, abs=1e-4)
    far = scaling_api.place(law, {"non_embedding": 10**8, "val_loss": on_line})
    assert not far["inside"] and far["extrapolated"]


def test_the_family_is_built_once_into_the_cache_and_read_back(monkeypatch, tmp_path):
    from backend.runtime.errors import LabError

    monkeypatch.setattr(scaling, "RECIPE", scaling.Recipe(steps=10, eval_every=5, batch=2, context=8, val_windows=4))
    monkeypatch.setattr(scaling, "FAMILY", ((1, 8), (1, 16), (2, 16)))
    monkeypatch.setattr(scaling_api, "SHIPPED", tmp_path / "none.json")
    with pytest.raises(LabError, match="make build"):
        scaling_api.load_family(tmp_path)
    said = []
    path, now = scaling_api.build(say=said.append, root=tmp_path)
    assert now and path.exists() and len(said) == 3
    assert scaling_api.build(say=said.append, root=tmp_path) == (path, False) and len(said) == 3  # once
    family = scaling_api.load_family(tmp_path)
    assert family["source"].startswith("built on this machine") and len(family["runs"]) == 3
    assert [r["evals"][-1]["step"] for r in family["runs"]] == [10, 10, 10]
    monkeypatch.setattr(scaling_api, "SHIPPED", path)  # a shipped copy made with the same recipe is read
    assert scaling_api.load_family(tmp_path / "empty")["source"].startswith("the copy shipped")
    monkeypatch.setattr(scaling, "RECIPE", scaling.Recipe(steps=11, eval_every=5, batch=2, context=8, val_windows=4))
    with pytest.raises(LabError):  # another recipe: neither the cache nor the shipped copy is its family
        scaling_api.load_family(tmp_path)


def test_the_shipped_family_is_the_default_recipes():
    import json

    shipped = json.loads(scaling_api.SHIPPED.read_text())
    assert shipped["family"] == [list(s) for s in scaling.FAMILY]
    assert [r["non_embedding"] for r in shipped["runs"]] == [scaling.non_embedding_estimate(*s) for s in scaling.FAMILY]
