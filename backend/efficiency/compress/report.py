"""The chapter 8 benchmark's raw run (`compress_run.run`) as tables a tab shows and a script
reads: one row per variant with ratios to the fine-tuned baseline, the pruning curve, where the
ONNX and int8 models disagree with the PyTorch student, the issue's targets, and "What to
notice" lines computed from these numbers (never written in advance)."""

from __future__ import annotations

from backend.efficiency.compress import claims
from backend.efficiency.compress.claims import ORT_SPEEDUP, STUDENT_KEEP, STUDENT_LATENCY  # noqa: F401  (the targets)
from backend.engines.compression.pipeline import NAMES


def label_of(key: str) -> str:
    if key.startswith("pruned_"):
        return f"Student pruned to {key[len('pruned_'):]}% zeros"
    return NAMES.get(key, key)


def _ratio(a, b, digits=3):
    return round(a / b, digits) if a is not None and b else None


def _speed(r: dict, base: dict, variant: str) -> dict:
    """The speed-up over the baseline with its 95% interval, the decimals it supports, and whether this
    variant's own timing is too noisy to rank (`claims.speedup`, `stats.timing_summary`)."""
    row = {**r, "variant": variant}  # mean, std and count: the same Welch interval the "fastest" claim reads
    sp = claims.speedup(row, {**base, "variant": label_of(base["name"])})
    return {"speedup_ci95": [round(sp["lo"], 3), round(sp["hi"], 3)], "speedup_decimals": sp["decimals"],
            "timing_noisy": claims.timing_of(row).noisy}


def rows(raw: dict) -> list[dict]:
    base = raw["rows"][0]
    out = []
    for r in raw["rows"]:
        out.append({**_speed(r, base, label_of(r["name"])), "key": r["name"], "variant": label_of(r["name"]), "accuracy": r["accuracy"],
                    "latency_ms_mean": r["latency_ms_mean"], "latency_ms_std": r["latency_ms_std"],
                    "latency_runs": r["latency_runs"], "size_mb": r["size_mb"], "files": r["files"],
                    "test_n": len(r.get("predictions") or []),
                    "accuracy_vs_baseline": _ratio(r["accuracy"], base["accuracy"], 4),
                    "speedup_vs_baseline": _ratio(base["latency_ms_mean"], r["latency_ms_mean"]),
                    "size_vs_baseline": _ratio(r["size_mb"], base["size_mb"])})
    return out


def disagreements(raw: dict, texts: list[str], labels: list[str]) -> dict:
    """Per variant, the test examples where its prediction differs from the PyTorch student's."""
    preds = {r["name"]: r["predictions"] for r in raw["rows"]}
    if "student" not in preds:
        return {}
    ref = preds["student"]
    out = {}
    for key, p in preds.items():
        if key in ("student", "teacher"):
            continue
        diff = [i for i, (a, b) in enumerate(zip(ref, p)) if a != b]
        out[key] = {"differ": len(diff), "of": len(ref),
                    "examples": [{"text": texts[i], "student": labels[ref[i]], key: labels[p[i]]} for i in diff[:8]]}
    return out


def pruning_curve(raw: dict) -> list[dict]:
    by_key = {r["name"]: r for r in raw["rows"]}
    facts = raw["facts"].get("prune", {}).get("pruned", [])
    if "student" not in by_key or not facts:
        return []
    s = by_key["student"]
    curve = [{"sparsity": 0.0, "accuracy": s["accuracy"], "latency_ms_mean": s["latency_ms_mean"],
              "size_mb": s["size_mb"], "compressed_mb": raw["facts"]["prune"].get("student_compressed_mb")}]
    for f in facts:
        r = by_key.get(f"pruned_{round(100 * f['sparsity'])}")
        if r is not None:
            curve.append({"sparsity": f["measured_sparsity"], "accuracy": r["accuracy"],
                          "latency_ms_mean": r["latency_ms_mean"], "size_mb": r["size_mb"],
                          "compressed_mb": f["compressed_mb"]})
    return curve


def targets(table: list[dict]) -> dict:
    """The chapter's targets, each "met", "not met" or "cannot tell" with why (backend.efficiency.compress.claims)."""
    by = {r["key"]: r for r in table}
    out = {}
    if "student" in by:
        out["student"] = claims.student_target(by["student"], by["teacher"])
    if "student_onnx_int8" in by:
        out["onnx_int8"] = claims.onnx_int8_target(by["student_onnx_int8"], by["teacher"])
    return out


def notices(table: list[dict], curve: list[dict], agree: dict) -> list[str]:
    """One line per finding, read off this run's numbers."""
    base = table[0]
    lines = []
    main = [r for r in table if not r["key"].startswith("pruned_")]
    claim = claims.fastest(table)
    fastest = next((r for r in main if r["key"] == claim["key"]), None)
    if fastest is None:
        lines.append(f"No variant is named the fastest: {claim['why']}.")
    elif fastest is not base:
        d = fastest["speedup_decimals"]
        lo, hi = fastest["speedup_ci95"]
        lines.append(f"Fastest: {fastest['variant']} ({claim['why']}), {fastest['speedup_vs_baseline']:.{d}f}x the "
                     f"baseline's speed (95% interval {lo:.{d}f}-{hi:.{d}f}x; "
                     f"{fastest['latency_ms_mean']:.1f} vs {base['latency_ms_mean']:.1f} ms a query) at "
                     f"{100 * fastest['accuracy']:.1f}% accuracy vs {100 * base['accuracy']:.1f}%, "
                     f"{fastest['size_mb']:.1f} MB vs {base['size_mb']:.1f} MB on disk.")
    lines += accuracy_lines(table)
    smallest = min(main, key=lambda r: r["size_mb"])
    if smallest is not base and smallest is not fastest:
        lines.append(f"Smallest file: {smallest['variant']}, {smallest['size_mb']:.1f} MB "
                     f"({smallest['size_vs_baseline']:.2f}x the baseline's).")
    for key, d in agree.items():
        if key in ("student_onnx", "student_onnx_int8", "student_int8"):
            lines.append(f"{label_of(key)} predicts the same label as the PyTorch student on {d['of'] - d['differ']} "
                         f"of {d['of']} test sentences.")
    if len(curve) > 1:
        last = curve[-1]
        lines.append(f"Pruning to {100 * last['sparsity']:.0f}% zeros: accuracy {100 * curve[0]['accuracy']:.1f}% -> "
                     f"{100 * last['accuracy']:.1f}% (no retraining); the dense file stays {last['size_mb']:.1f} MB "
                     f"and a query takes {last['latency_ms_mean']:.1f} ms vs {curve[0]['latency_ms_mean']:.1f} ms "
                     f"(no sparse kernels on this CPU); only the deflated file shrinks: {last['compressed_mb']:.1f} MB.")
    return lines


def accuracy_lines(table: list[dict]) -> list[str]:
    """One line on what an accuracy difference on this few test sentences can mean."""
    changes = claims.accuracy_changes(table)
    if not changes:
        return []
    first = next(iter(changes.values()))
    lo, hi = first["ci95"]
    inside = [label_of(k) for k, c in changes.items() if c["within_noise"] and c["sentences"]]
    outside = [f"{label_of(k)} ({c['points']:+.1f} points)" for k, c in changes.items() if not c["within_noise"]]
    line = (f"Accuracy is measured on {first['of']} test sentences: the baseline's 95% interval is "
            f"{100 * lo:.1f}-{100 * hi:.1f}%, so a difference inside it is within noise (one sentence is "
            f"{100 / max(1, first['of']):.1f} points)")
    if inside:
        line += "; within noise: " + ", ".join(inside)
    if outside:
        line += "; outside it: " + ", ".join(outside)
    return [line + "."]
