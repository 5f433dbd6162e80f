"""Plotly figures for the chapter 8 benchmark (the Efficiency tab's compress section): the book's
scatter (accuracy against latency, marker area = size on disk) and the pruning curve, each with
a "What to notice" line read off its own data."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice
from components.efficiency.plots import empty_figure
from components.shell.figures import legend_below

COLORS = {"teacher": "#1f77b4", "student": "#ff7f0e", "student_int8": "#d62728", "student_onnx": "#2ca02c",
          "student_onnx_int8": "#9467bd"}
PRUNED_COLORS = ("#8c564b", "#e377c2", "#bcbd22", "#17becf", "#7f7f7f", "#393b79")  # each sparsity its own
MARKER_MAX_PX = 40  # the largest file's marker: 60 px covered its neighbours on a phone
BAR_WIDTH = 4.0  # the pruning plot's file-size bars, in sparsity points (the axis runs 0-100)


def _marker_px(mb: float, largest: float) -> float:
    return max(8.0, MARKER_MAX_PX * (mb / largest) ** 0.5) if largest > 0 else 20.0


def _color(key: str, pruned_index: int) -> str:
    return COLORS.get(key) or PRUNED_COLORS[pruned_index % len(PRUNED_COLORS)]


def accuracy_range(values: list[float]) -> list[float]:
    """The accuracy axis (%): the values with room around them, within 0-100 (autorange padded the large
    markers into -100 to 200 on a short phone plot)."""
    lo, hi = min(values), max(values)
    pad = max(5.0, 0.15 * (hi - lo))
    return [max(0.0, lo - pad), min(100.0, hi + pad)]


def scatter(rows: list[dict], fastest: dict | None = None) -> go.Figure:
    """One marker per variant: x = mean latency at batch 1 (error bar = std), y = test accuracy; each variant
    its own colour, named in the legend (labels on the markers piled up where latencies are close)."""
    largest = max((r["size_mb"] for r in rows), default=0.0)
    fig = go.Figure()
    pruned = 0
    for r in rows:
        color = _color(r["key"], pruned)
        pruned += r["key"].startswith("pruned_")
        fig.add_trace(go.Scatter(
            x=[r["latency_ms_mean"]], y=[100 * r["accuracy"]], cliponaxis=False, mode="markers",
            name=f"{r['variant']} · {r['size_mb']:.0f} MB",
            error_x=dict(type="data", array=[r["latency_ms_std"]], visible=True, color=color),
            marker=dict(size=_marker_px(r["size_mb"], largest), color=color, opacity=0.6,
                        line=dict(width=1, color="#333")),
            hovertemplate=f"{r['variant']}<br>latency %{{x:.2f}} ms (std {r['latency_ms_std']:.2f})<br>"
                          f"accuracy %{{y:.1f}}%<br>{r['size_mb']:.1f} MB on disk<extra></extra>"))
    xs = [r["latency_ms_mean"] + (r["latency_ms_std"] or 0) for r in rows]
    if xs:
        fig.update_xaxes(range=[0, max(xs) * 1.15])
        fig.update_yaxes(range=accuracy_range([100 * r["accuracy"] for r in rows]))
    fig.update_layout(title="Accuracy against latency (marker area = size on disk)", height=440,
                      xaxis_title="latency per query at batch 1 (ms, mean ± std)", yaxis_title="test accuracy (%)",
                      template="plotly_white", margin=dict(l=60, r=20, t=60, b=20))
    legend_below(fig, "variant · size on disk")
    return notice(fig, scatter_notice(rows, fastest))


def scatter_notice(rows: list[dict], fastest: dict | None = None) -> str:
    """The figure's line, from the run's claim on the fastest (backend.efficiency.compress.claims): a winner only where
    the claim names one, else why none is named."""
    if not rows:
        return ""
    base = rows[0]
    best = max(rows, key=lambda r: (r["accuracy"], -r["latency_ms_mean"]))
    key = (fastest or {}).get("key")
    winner = next((r for r in rows if r["key"] == key), None)
    if winner is None:
        why = (fastest or {}).get("why") or "no claim on speed was made for this run"
        return (f"No variant is named the fastest: {why}. The highest accuracy measured is {best['variant']}'s "
                f"({100 * best['accuracy']:.1f}% on {best.get('test_n') or '?'} test sentences; the summary says which "
                "differences are within noise).")
    if winner is base:
        return (f"The baseline is the fastest here ({base['latency_ms_mean']:.1f} ms a query); "
                f"the highest accuracy measured is {best['variant']}'s ({100 * best['accuracy']:.1f}%; the summary "
                "says which differences are within noise).")
    d = winner.get("speedup_decimals", 1)
    lo, hi = winner.get("speedup_ci95") or (winner["speedup_vs_baseline"],) * 2
    return (f"Furthest left: {winner['variant']}, {winner['speedup_vs_baseline']:.{d}f}x faster than the baseline "
            f"(95% interval {lo:.{d}f}-{hi:.{d}f}x; {winner['latency_ms_mean']:.1f} vs {base['latency_ms_mean']:.1f} ms), "
            f"accuracy "
            f"{100 * winner['accuracy']:.1f}% vs {100 * base['accuracy']:.1f}%; its file is "
            f"{winner['size_mb']:.0f} MB vs {base['size_mb']:.0f} MB.")


def pruning(curve: list[dict]) -> go.Figure:
    """Accuracy and latency against sparsity, with the dense and the deflated file sizes."""
    if not curve:
        # Hidden axes, as every empty figure here: a bare go.Figure() replacing the two-axis pruning plot made
        # Plotly throw "Something went wrong with axis scaling" in the browser, which left the run's status
        # spinning and the rest of its outputs unapplied (the chapter 8 walk's "Next step").
        return empty_figure("Pruning not run yet: it is the last step (run through 'prune' or 'all').")
    fig = go.Figure()
    xs = [100 * c["sparsity"] for c in curve]
    fig.add_trace(go.Scatter(x=xs, y=[100 * c["accuracy"] for c in curve], mode="lines+markers",
                             name="test accuracy (%)", cliponaxis=False))
    fig.add_trace(go.Scatter(x=xs, y=[c["latency_ms_mean"] for c in curve], mode="lines+markers",
                             name="latency (ms)", yaxis="y2", cliponaxis=False))
    bars = [("file MB (dense)", [c["size_mb"] for c in curve])]
    if all(c.get("compressed_mb") is not None for c in curve):
        bars.append(("file MB deflated", [c["compressed_mb"] for c in curve]))
    for i, (name, ys) in enumerate(bars):  # thin bars beside each sparsity: one sparsity drew two slabs
        fig.add_trace(go.Bar(x=xs, y=ys, name=name, yaxis="y2", opacity=0.25, width=BAR_WIDTH,
                             offset=(i - len(bars)) * BAR_WIDTH - 0.5))
    fig.update_layout(title="Magnitude pruning of the student (no retraining)", height=420, barmode="overlay",
                      xaxis=dict(title="share of encoder weights set to zero (%)", range=[-2 * BAR_WIDTH - 3, 100],
                                 tickvals=xs, ticktext=[f"{x:.0f}" for x in xs]),
                      yaxis=dict(title="test accuracy (%)", range=accuracy_range([100 * c["accuracy"] for c in curve])),
                      yaxis2=dict(title="ms / MB", overlaying="y", side="right", rangemode="tozero"),
                      template="plotly_white", margin=dict(l=60, r=60, t=60, b=20))
    legend_below(fig)
    return notice(fig, pruning_notice(curve))


def pruning_notice(curve: list[dict]) -> str:
    if len(curve) < 2:
        return ""
    a, b = curve[0], curve[-1]
    size = ("the dense file stays the same size" if abs(b["size_mb"] - a["size_mb"]) < 0.01 * a["size_mb"]
            else f"the file goes from {a['size_mb']:.1f} to {b['size_mb']:.1f} MB")
    return (f"At {100 * b['sparsity']:.0f}% zeros accuracy is {100 * b['accuracy']:.1f}% (unpruned "
            f"{100 * a['accuracy']:.1f}%); {size} and a query takes {b['latency_ms_mean']:.1f} ms vs "
            f"{a['latency_ms_mean']:.1f} ms: without sparse kernels the zeros are still multiplied."
            + (f" Only the deflated file shrinks ({a['compressed_mb']:.1f} -> {b['compressed_mb']:.1f} MB)."
               if a.get("compressed_mb") and b.get("compressed_mb") else ""))
