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
  steadier than their milliseconds, but one run is still one run: a ratio within SPEED_NOISE of
  1 (or of a target) is not called faster (or met), nor is a gap under two standard errors of
  the difference of the means, nor anything timed fewer than MIN_TIMED_CALLS times.
"""

from __future__ import annotations

import math

from backend.engines.classify.metrics import wilson_interval

MIN_TIMED_CALLS = 20  # fewer timed calls per variant: no variant is named the fastest
SPEED_NOISE = 0.10  # one run's ratios on a shared CPU: 1.10x faster or more is called faster
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


def fastest(rows: list[dict]) -> dict:
    """{"key": the fastest variant or None, "variant", "why"}: named only when two or more variants were
    timed MIN_TIMED_CALLS times or more and the fastest beats the next by SPEED_NOISE and by two standard
    errors of the difference of their means."""
    main = sorted(_main(rows), key=lambda r: r["latency_ms_mean"])
    if len(main) < 2:
        return {"key": None, "variant": None, "why": "only the baseline was measured: nothing to compare it with"}
    few = _timing_few(main)
    if few < MIN_TIMED_CALLS:
        return {"key": None, "variant": None,
                "why": f"only {few} timed calls per variant (fewer than {MIN_TIMED_CALLS}): too few to name one"}
    best, second = main[0], main[1]
    se = math.sqrt(sum((r["latency_ms_std"] or 0.0) ** 2 / max(1, r["latency_runs"]) for r in (best, second)))
    gap = second["latency_ms_mean"] - best["latency_ms_mean"]
    ratio = second["latency_ms_mean"] / best["latency_ms_mean"] if best["latency_ms_mean"] else 1.0
    said = (f"{best['variant']} {best['latency_ms_mean']:.2f} ± {best['latency_ms_std']:.2f} ms, "
            f"{second['variant']} {second['latency_ms_mean']:.2f} ± {second['latency_ms_std']:.2f} ms")
    if ratio < 1 + SPEED_NOISE or gap <= 2 * se:
        return {"key": None, "variant": None, "tied": [best["key"], second["key"]],
                "why": f"the two fastest are within timing noise ({said}: {ratio:.2f}x, under the "
                       f"{1 + SPEED_NOISE:.2f}x one run on a shared CPU can tell apart)"}
    return {"key": best["key"], "variant": best["variant"], "ratio_to_next": round(ratio, 3),
            "why": f"{ratio:.2f}x faster than the next ({said})"}


def _speed_verdict(ratio: float | None, target: float, below: bool) -> str:
    """'yes' / 'no' / 'noise' for a latency ratio (below: must be under `target`) or a speed-up (above)."""
    if ratio is None:
        return "noise"
    if below:
        return "yes" if ratio * (1 + SPEED_NOISE) < target else "no" if ratio / (1 + SPEED_NOISE) >= target else "noise"
    return "yes" if ratio >= target * (1 + SPEED_NOISE) else "no" if ratio * (1 + SPEED_NOISE) < target else "noise"


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
    speed = _speed_verdict(latency, STUDENT_LATENCY, below=True)
    why = []
    if acc == "noise":
        why.append(f"the {100 * need:.1f}% accuracy needed lies inside the student's 95% interval on {n} sentences "
                   f"({100 * lo:.1f}-{100 * hi:.1f}%)")
    if speed == "noise":
        why.append(f"its latency ratio {latency:.2f}x is within {100 * SPEED_NOISE:.0f}% of {STUDENT_LATENCY}x, "
                   "inside one run's timing noise")
    status = _status([acc, speed])
    return {"accuracy_kept": None if kept is None else round(kept, 4),
            "latency_ratio": None if latency is None else round(latency, 3),
            "status": status, "met": status == "met", "why": "; ".join(why), "ci95": [round(lo, 4), round(hi, 4)]}


def onnx_int8_target(row: dict, teacher: dict) -> dict:
    """ONNX Runtime int8 at least ORT_SPEEDUP times faster than the baseline: "met", "not met" or "cannot
    tell" (within SPEED_NOISE of the target), with the accuracy change and whether it is within noise."""
    speedup = teacher["latency_ms_mean"] / row["latency_ms_mean"] if row["latency_ms_mean"] else None
    verdict = _speed_verdict(speedup, ORT_SPEEDUP, below=False)
    status = _status([verdict])
    change = accuracy_change(row["accuracy"], teacher["accuracy"], row.get("test_n") or 0)
    why = (f"{speedup:.2f}x is within {100 * SPEED_NOISE:.0f}% of {ORT_SPEEDUP:g}x, inside one run's timing noise"
           if verdict == "noise" else "")
    return {"speedup": None if speedup is None else round(speedup, 3),
            "accuracy_loss": round(teacher["accuracy"] - row["accuracy"], 4), "accuracy_change": change,
            "status": status, "met": status == "met", "why": why}
