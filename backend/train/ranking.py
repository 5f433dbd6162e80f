"""Which of a Train run's methods may be called the most accurate, from `backend.runtime.stats.claim`:

- a method the time budget cut short (fine-tuning that stopped before its last step) is shown as cut and never
  ranked against complete runs: its score is what a few steps reached, not what the method does;
- among the complete ones, the most accurate is named only where the paired bootstrap of the accuracy
  difference against the runner-up (the same test examples) excludes zero; otherwise the reason is said.
"""

from __future__ import annotations

import numpy as np

from backend.runtime import stats

NAMES = {"zero_shot": "zero-shot (similarity)", "probe": "features + logistic regression", "finetune": "fine-tuning"}


def is_cut(method: dict) -> bool:
    """A run the time budget ended before its last step."""
    return method.get("stopped") == "time budget" and method.get("steps", 0) < method.get("total_steps", 0)


def cut_text(key: str, method: dict) -> str:
    return (f"{NAMES.get(key, key)} was cut short by the time budget at {method['steps']}/{method['total_steps']} "
            "steps: its score is what those steps reached, so it is not ranked against the complete runs")


def rank(methods: dict) -> dict:
    """{"best": the method claimed most accurate or None, "order": complete methods by accuracy, "cut": cut
    methods, "claim": stats.claim against the runner-up (None with one complete method), "text": in words}."""
    scored = {k: m for k, m in methods.items() if m.get("accuracy") is not None}
    cut = [k for k, m in scored.items() if is_cut(m)]
    order = sorted((k for k in scored if k not in cut), key=lambda k: -scored[k]["accuracy"])
    out = {"best": None, "order": order, "cut": cut, "claim": None}
    said = [cut_text(k, scored[k]) for k in cut]
    if len(order) == 1:
        out["best"] = order[0]
        said.insert(0, f"{NAMES.get(order[0], order[0])} is the only complete method")
    elif len(order) > 1:
        a, b = order[0], order[1]
        ca, cb = scored[a].get("test_correct"), scored[b].get("test_correct")
        if ca is None or cb is None or len(ca) != len(cb):
            claim = {"claimed": False, "reason": "too_few", "why": "the per-example results were not kept"}
        else:
            ea = stats.accuracy(np.asarray(ca, dtype=float), NAMES.get(a, a))
            eb = stats.accuracy(np.asarray(cb, dtype=float), NAMES.get(b, b))
            claim = stats.claim(ea, eb, stats.paired_difference(ca, cb), what=f"accuracy difference over {NAMES.get(b, b)} on "
                                "the same test examples", units="test examples", better_word="the most accurate").as_dict()
        out["claim"] = claim
        if claim["claimed"]:
            out["best"] = a
            said.insert(0, claim["why"])
        else:
            said.insert(0, f"no method is named the most accurate: {claim['why']}")
    out["text"] = "; ".join(said)
    return out
