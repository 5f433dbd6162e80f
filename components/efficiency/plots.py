"""Plotly figures for the Efficiency tab: the book's chapter 8 scatter (latency against quality,
marker area = model size), built from the backend's plain rows."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice
from components.shell.figures import legend_below

COLORS = {"fp32": "#1f77b4", "int8": "#ff7f0e", "onnx": "#2ca02c"}


def _marker_px(mb: float, largest: float) -> float:
    """Marker diameter in pixels: area proportional to size, the largest model 60 px across."""
    return max(8.0, 60.0 * (mb / largest) ** 0.5) if largest > 0 else 20.0


def latency_quality(rows: list[dict], x_key: str, y_key: str, x_title: str, y_title: str, title: str,
                    y_percent: bool = False) -> go.Figure:
    """One marker per model: x = latency, y = quality, marker size = memory (MB), as the book plots it."""
    largest = max((r["memory_mb"] for r in rows), default=0.0)
    fig = go.Figure()
    for r in rows:
        y = r[y_key] * 100 if y_percent and r[y_key] is not None else r[y_key]
        fig.add_trace(go.Scatter(
            x=[r[x_key]], y=[y], mode="markers", name=f"{r['name']} ({r['memory_mb']:.0f} MB)",
            cliponaxis=False,  # named in the legend: names over markers piled up on a phone
            marker=dict(size=_marker_px(r["memory_mb"], largest), color=COLORS.get(r["precision"], "#7f7f7f"),
                        opacity=0.6, line=dict(width=1, color="#333")),
            hovertemplate=f"{r['name']}<br>{x_title}: %{{x:.2f}}<br>{y_title}: %{{y:.3f}}<br>"
                          f"memory {r['memory_mb']:.1f} MB, disk {r['disk_mb']:.1f} MB<extra></extra>",
        ))
    xs = [r[x_key] for r in rows if r[x_key] is not None]
    if xs:
        fig.update_xaxes(range=[0, max(xs) * 1.3])
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=380, template="plotly_white",
                      margin=dict(l=60, r=20, t=60, b=20))
    legend_below(fig, "marker area = size in memory")
    if y_percent:
        ys = [r[y_key] * 100 for r in rows if r[y_key] is not None]
        fig.update_yaxes(range=[min(ys + [100]) - 12, 108])  # no tick at the bottom corner, on the x axis's 0
    else:
        ys = [r[y_key] for r in rows if r[y_key] is not None]
        if ys:  # headroom over the highest marker: its name ("... int8") sits above it, inside the plot
            lo, hi = min(ys), max(ys)
            pad = (hi - lo) * 0.35 or abs(hi) * 0.05 or 1.0
            fig.update_yaxes(range=[lo - pad * 0.6, hi + pad])
    return fig


def decoder_scatter(dec: dict) -> go.Figure:
    rows = [dict(r, ms_per_token=1000.0 / r["tokens_per_s"] if r["tokens_per_s"] else None) for r in dec["rows"]]
    fig = latency_quality(rows, "ms_per_token", "perplexity", "ms per generated token (greedy)",
                          "perplexity on the shipped texts (lower is better)", "Decoder: latency against perplexity")
    return notice(fig, efficiency_notice(rows, "ms_per_token", "ms per token", "perplexity", "perplexity", "{:.2f}"))


def encoder_scatter(enc: dict) -> go.Figure:
    fig = latency_quality(enc["rows"], "ms_per_text", "agreement", "ms per text (classification)",
                          "labels equal to fp32's (%)", "Encoder: latency against agreement with fp32", y_percent=True)
    return notice(fig, efficiency_notice(enc["rows"], "ms_per_text", "ms per text", "agreement", "agreement with fp32", "{:.0%}"))


def efficiency_notice(rows: list[dict], x_key: str, x_words: str, y_key: str, y_words: str, y_format: str) -> str:
    """int8 against fp32 in this run: how much smaller, how much faster, what quality it kept."""
    by = {r.get("precision"): r for r in rows}
    a, b = by.get("fp32"), by.get("int8")
    if not a or not b or not a.get("memory_mb") or not b.get("memory_mb"):
        return ""
    said = f"int8 is {a['memory_mb'] / b['memory_mb']:.1f}x smaller in memory than fp32 (the marker areas)"
    if a.get(x_key) and b.get(x_key):
        ratio = a[x_key] / b[x_key]
        said += (f" and {ratio:.2f}x as fast ({b[x_key]:.1f} vs {a[x_key]:.1f} {x_words})" if ratio >= 1
                 else f" but {1 / ratio:.2f}x slower here ({b[x_key]:.1f} vs {a[x_key]:.1f} {x_words})")
    if a.get(y_key) is not None and b.get(y_key) is not None:
        said += f"; {y_words}: fp32 {y_format.format(a[y_key])}, int8 {y_format.format(b[y_key])}"
    return said + "."



def empty_figure(message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font=dict(size=14))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=240, template="plotly_white", margin=dict(l=20, r=20, t=20, b=20))
    return fig
