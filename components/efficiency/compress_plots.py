"""Plotly figures for the chapter 8 benchmark (the Efficiency tab's compress section): the book's
scatter (accuracy against latency, marker area = size on disk) and the pruning curve, each with
a "What to notice" line read off its own data."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice

COLORS = {"teacher": "#1f77b4", "student": "#ff7f0e", "student_int8": "#d62728", "student_onnx": "#2ca02c",
          "student_onnx_int8": "#9467bd"}


def _marker_px(mb: float, largest: float) -> float:
    return max(8.0, 60.0 * (mb / largest) ** 0.5) if largest > 0 else 20.0


def scatter(rows: list[dict]) -> go.Figure:
    """One marker per variant: x = mean latency at batch 1 (error bar = std), y = test accuracy."""
    largest = max((r["size_mb"] for r in rows), default=0.0)
    fig = go.Figure()
    for r in rows:
        fig.add_trace(go.Scatter(
            x=[r["latency_ms_mean"]], y=[100 * r["accuracy"]], cliponaxis=False,
            mode="markers" if r["key"].startswith("pruned_") else "markers+text",  # pruned: legend and hover only
            name=f"{r['variant']} ({r['size_mb']:.0f} MB)", text=[r["variant"]], textposition="top center",
            error_x=dict(type="data", array=[r["latency_ms_std"]], visible=True),
            marker=dict(size=_marker_px(r["size_mb"], largest), color=COLORS.get(r["key"], "#7f7f7f"), opacity=0.6,
                        line=dict(width=1, color="#333")),
            hovertemplate=f"{r['variant']}<br>latency %{{x:.2f}} ms (std {r['latency_ms_std']:.2f})<br>"
                          f"accuracy %{{y:.1f}}%<br>{r['size_mb']:.1f} MB on disk<extra></extra>"))
    xs = [r["latency_ms_mean"] for r in rows]
    if xs:
        fig.update_xaxes(range=[0, max(xs) * 1.3])
    fig.update_layout(title="Accuracy against latency (marker area = size on disk)", height=420,
                      xaxis_title="latency per query at batch 1 (ms, mean ± std)", yaxis_title="test accuracy (%)",
                      template="plotly_white", margin=dict(l=60, r=20, t=60, b=50),
                      legend=dict(orientation="h", y=-0.3, x=0, title_text="variant (size on disk)"))
    return notice(fig, scatter_notice(rows))


def scatter_notice(rows: list[dict]) -> str:
    if not rows:
        return ""
    base = rows[0]
    fastest = min(rows, key=lambda r: r["latency_ms_mean"])
    best = max(rows, key=lambda r: (r["accuracy"], -r["latency_ms_mean"]))
    if fastest is base:
        return (f"The baseline is the fastest here ({base['latency_ms_mean']:.1f} ms a query); "
                f"the most accurate is {best['variant']} ({100 * best['accuracy']:.1f}%).")
    return (f"Furthest left: {fastest['variant']}, {base['latency_ms_mean'] / fastest['latency_ms_mean']:.1f}x faster "
            f"than the baseline ({fastest['latency_ms_mean']:.1f} vs {base['latency_ms_mean']:.1f} ms), accuracy "
            f"{100 * fastest['accuracy']:.1f}% vs {100 * base['accuracy']:.1f}%; its file is "
            f"{fastest['size_mb']:.0f} MB vs {base['size_mb']:.0f} MB.")


def pruning(curve: list[dict]) -> go.Figure:
    """Accuracy and latency against sparsity, with the dense and the deflated file sizes."""
    fig = go.Figure()
    if not curve:
        fig.update_layout(title="Pruning not run yet", height=200, template="plotly_white")
        return fig
    xs = [100 * c["sparsity"] for c in curve]
    fig.add_trace(go.Scatter(x=xs, y=[100 * c["accuracy"] for c in curve], mode="lines+markers",
                             name="test accuracy (%)", cliponaxis=False))
    fig.add_trace(go.Scatter(x=xs, y=[c["latency_ms_mean"] for c in curve], mode="lines+markers",
                             name="latency (ms)", yaxis="y2", cliponaxis=False))
    fig.add_trace(go.Bar(x=xs, y=[c["size_mb"] for c in curve], name="file MB (dense)", yaxis="y2", opacity=0.25))
    if all(c.get("compressed_mb") is not None for c in curve):
        fig.add_trace(go.Bar(x=xs, y=[c["compressed_mb"] for c in curve], name="file MB deflated", yaxis="y2",
                             opacity=0.25))
    fig.update_layout(title="Magnitude pruning of the student (no retraining)", height=400, barmode="group",
                      xaxis_title="share of encoder weights set to zero (%)", yaxis_title="test accuracy (%)",
                      yaxis2=dict(title="ms / MB", overlaying="y", side="right", rangemode="tozero"),
                      template="plotly_white", margin=dict(l=60, r=60, t=60, b=50),
                      legend=dict(orientation="h", y=-0.3, x=0))
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
