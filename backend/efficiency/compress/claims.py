"""The chapter 8 benchmark's verdicts, each a claim with its conditions: "fastest", a target "met",
an accuracy "gain". Each function says what the numbers allow and, when they do not allow the
claim, why (one variant measured, too few timed calls, a gap inside the timing noise, an accuracy
difference inside the 95% interval of a score on this few sentences); the tab then says so
instead of naming a winner.

Two kinds of noise:
- accuracy on n test sentences: the 95% Wilson interval of the reference's accuracy
  (`classification_metrics.wilson_interval`); a variant whose accuracy lies inside it differs by
  a few sentences that another sample would shuffle;
- latency from one run on a shared CPU: the variants are timed interleaved, so their ratio is
  steadier than their milliseconds, but one run is still one run: "fastest" comes from
  `backend.runtime.stats.claim` (not with fewer than MIN_TIMED_CALLS calls, nor from a timing whose
  standard deviation exceeds its mean, nor when the 95% interval of the ratio includes 1x, nor under
  1 + SPEED_NOISE), and a target within SPEED_NOISE of its ratio is "cannot tell".
"""

from __future__ import annotations

from backend.engines.classify.metrics import wilson_interval
from backend.runtime import stats

MIN_TIMED_CALLS = stats.MIN_CALLS  # fewer timed calls per variant: no variant is named the fastest
SPEED_NOISE = stats.SPEED_NOISE  # one run's ratios on a shared CPU: 1.10x faster or more is called faster
STUDENT_KEEP = 0.95  # the student keeps >= 95 % of the teacher's accuracy ...
STUDENT_LATENCY = 0.5  # ... at under half its latency
ORT_SPEEDUP = 3.0  # ONNX Runtime + int8 at least 3x faster than the baseline


def _main(rows: list[dict]) -> list[dict]:
    return [r for r in rows if not r["key"].startswith("pruned_")]


def accuracy_change(acc: float, ref_acc: float, n: int) -> dict:
    """How `acc` differs from `ref_acc`, both on the same `n` sentences: points, sentences, the 95%
    Wilson interval of the reference's accuracy, and whether `acc` lies inside it (within noise)."""
    lo, hi = wilson_interval(round(ref_acc * n), n)
    return {"points": round(100 * (acc - ref_acc), 1), "sentences": round((acc - ref_acc) * n), "of": n,
            "ci95": [round(lo, 4), round(hi, 4)], "within_noise": bool(lo <= acc <= hi)}


def accuracy_changes(rows: list[dict]) -> dict:
    """Each variant's accuracy against the baseline's (the first row), on the rows' test sentences."""
    base = rows[0]
    return {r["key"]: accuracy_change(r["accuracy"], base["accuracy"], r["test_n"]) for r in rows[1:]
            if r.get("test_n")}


def _timing_few(rows: list[dict]) -> int:
    return min(r.get("latency_runs") or 0 for r in rows)


def timing_of(row: dict) -> stats.Estimate:
    """A variant's mean latency with its 95% interval: from its calls' times where the run kept them, else from
    its mean, standard deviation and count."""
    if row.get("latency_ms"):
        return stats.timing(row["latency_ms"], row["variant"])
    return stats.timing_summary(row["latency_ms_mean"] or 0.0, row["latency_ms_std"] or 0.0,
                                row.get("latency_runs") or 0, row["variant"])


def latency_ratio(slow: dict, fast: dict) -> tuple[float, float, float]:
    """(mean latency of `slow` / `fast`, 95% interval): bootstrap over the calls where both kept them, else Welch."""
    if not slow.get("latency_ms_mean") or not fast.get("latency_ms_mean"):  # not timed (or 0 ms): no ratio to speak of
        return 1.0, 1.0, 1.0
    if slow.get("latency_ms") and fast.get("latency_ms"):
        return stats.timing_ratio(slow["latency_ms"], fast["latency_ms"])
    return stats.timing_ratio_summary((slow["latency_ms_mean"], slow["latency_ms_std"] or 0.0, slow["latency_runs"]),
                                      (fast["latency_ms_mean"], fast["latency_ms_std"] or 0.0, fast["latency_runs"]))


def fastest(rows: list[dict]) -> dict:
    """{"key": the fastest variant or None, "variant", "reason", "why", "ratio_to_next", "ci95", "decimals"}: the
    fastest is named only where `stats.claim` claims it against the next (enough timed calls, neither timing too
    noisy, the 95% interval of their ratio above 1x and the ratio over 1 + SPEED_NOISE); `why` is the rule's."""
    main = sorted(_main(rows), key=lambda r: r["latency_ms_mean"])
    if len(main) < 2:
        return {"key": None, "variant": None, "reason": "one", "why": "only the baseline was measured: nothing to compare it with"}
    best, second = main[0], main[1]
    ratio = latency_ratio(second, best)
    c = stats.claim(timing_of(second), timing_of(best), ratio, ratio=True, higher_is_better=False,
                    min_n=MIN_TIMED_CALLS, min_change=SPEED_NOISE, units="timed calls", better_word="the fastest",
                    what=f"ratio of {second['variant']}'s mean latency to {best['variant']}'s")
    out = {"reason": c.reason, "why": c.why, "ratio_to_next": round(ratio[0], 3),
           "ci95": [round(ratio[1], 3), round(ratio[2], 3)], "decimals": stats.decimals(ratio[1], ratio[2])}
    if not c.claimed:
        return {"key": None, "variant": None, "tied": [best["key"], second["key"]], **out}
    return {"key": best["key"], "variant": best["variant"], **out}


def speedup(row: dict, base: dict) -> dict:
    """The baseline's mean latency over `row`'s, its 95% interval, the decimals that interval supports, and
    `noisy`: why either timing is too noisy to quote a speed-up from (None when neither is)."""
    r, lo, hi = latency_ratio(base, row)
    noisy = timing_of(row).noisy or timing_of(base).noisy
    return {"ratio": r, "lo": lo, "hi": hi, "decimals": stats.decimals(lo, hi, most=2), "noisy": noisy}


def _speed_verdict(ratio: float | None, target: float, below: bool, ci: tuple[float, float] | None = None) -> str:
    """'yes' / 'no' / 'noise' for a latency ratio (below: must be under `target`) or a speed-up (above): 'yes' or
    'no' only where the ratio is clear of the target by SPEED_NOISE and its 95% interval `ci` lies on that side."""
    if ratio is None:
        return "noise"
    lo, hi = ci or (ratio, ratio)
    if below:
        return ("yes" if ratio * (1 + SPEED_NOISE) < target and hi < target else
                "no" if ratio / (1 + SPEED_NOISE) >= target and lo >= target else "noise")
    return ("yes" if ratio >= target * (1 + SPEED_NOISE) and lo >= target else
            "no" if ratio * (1 + SPEED_NOISE) < target and hi < target else "noise")


def _noise_why(ratio: float, ci: tuple[float, float], target: float) -> str:
    d = stats.decimals(*ci, most=2)
    return (f"{ratio:.{d}f}x (95% interval {ci[0]:.{d}f}-{ci[1]:.{d}f}x) is within {100 * SPEED_NOISE:.0f}% of "
            f"{target:g}x or its interval reaches it, inside one run's timing noise")


def _noisy_but_clear(ratio: float | None, ci, target: float, *rows: dict) -> str:
    """A verdict made from noisy timings (a standard deviation over its mean) says why it still holds."""
    noisy = [r for r in rows if (r.get("latency_ms_std") or 0) > (r.get("latency_ms_mean") or 0) > 0]
    if ratio is None or not noisy:
        return ""
    d = stats.decimals(*ci, most=2)
    return (f"the timings are noisy (a standard deviation over its mean), but the 95% interval of the ratio, "
            f"{ci[0]:.{d}f}-{ci[1]:.{d}f}x, lies clear of {target:g}x")


def _status(parts: list[str]) -> str:
    return "not met" if "no" in parts else "met" if all(p == "yes" for p in parts) else "cannot tell"


def student_target(student: dict, teacher: dict) -> dict:
    """The student keeps >= STUDENT_KEEP of the baseline's accuracy at under STUDENT_LATENCY of its latency:
    "met", "not met", or "cannot tell" (the accuracy needed lies inside the student's 95% interval on this
    few sentences, or the latency ratio is within SPEED_NOISE of the target), with why."""
    n = student.get("test_n") or 0
    kept = student["accuracy"] / teacher["accuracy"] if teacher["accuracy"] else None
    latency = student["latency_ms_mean"] / teacher["latency_ms_mean"] if teacher["latency_ms_mean"] else None
    need = STUDENT_KEEP * teacher["accuracy"]
    lo, hi = wilson_interval(round(student["accuracy"] * n), n)
    acc = "yes" if lo >= need else "no" if hi < need else "noise"
    ci = latency_ratio(student, teacher)[1:] if latency is not None else None
    speed = _speed_verdict(latency, STUDENT_LATENCY, below=True, ci=ci)
    why = []
    if acc == "noise":
        why.append(f"the {100 * need:.1f}% accuracy needed lies inside the student's 95% interval on {n} sentences "
                   f"({100 * lo:.1f}-{100 * hi:.1f}%)")
    if speed == "noise" and latency is not None:
        why.append("its latency ratio " + _noise_why(latency, ci, STUDENT_LATENCY))
    elif latency is not None and _noisy_but_clear(latency, ci, STUDENT_LATENCY, student, teacher):
        why.append("the latency ratio: " + _noisy_but_clear(latency, ci, STUDENT_LATENCY, student, teacher))
    status = _status([acc, speed])
    return {"accuracy_kept": None if kept is None else round(kept, 4),
            "latency_ratio": None if latency is None else round(latency, 3),
            "latency_ci95": None if ci is None else [round(ci[0], 3), round(ci[1], 3)],
            "status": status, "met": status == "met", "why": "; ".join(why), "ci95": [round(lo, 4), round(hi, 4)]}


def onnx_int8_target(row: dict, teacher: dict) -> dict:
    """ONNX Runtime int8 at least ORT_SPEEDUP times faster than the baseline: "met", "not met" or "cannot
    tell" (within SPEED_NOISE of the target), with the accuracy change and whether it is within noise."""
    speedup = teacher["latency_ms_mean"] / row["latency_ms_mean"] if row["latency_ms_mean"] else None
    ci = latency_ratio(teacher, row)[1:] if speedup is not None else None
    verdict = _speed_verdict(speedup, ORT_SPEEDUP, below=False, ci=ci)
    status = _status([verdict])
    change = accuracy_change(row["accuracy"], teacher["accuracy"], row.get("test_n") or 0)
    why = _noise_why(speedup, ci, ORT_SPEEDUP) if verdict == "noise" and speedup is not None else \
        _noisy_but_clear(speedup, ci, ORT_SPEEDUP, row, teacher)
    return {"speedup": None if speedup is None else round(speedup, 3),
            "accuracy_loss": round(teacher["accuracy"] - row["accuracy"], 4), "accuracy_change": change,
            "status": status, "met": status == "met", "why": why}
