"""Plotly figures for the Attention tab (plain data in, figures out; no model code here)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.shell import notice

SUMMARY_TITLES = {
    "entropy": "Entropy (bits)",
    "special": "To special tokens",
    "first": "To the first token",
    "previous": "To the previous token",
    "self": "To itself",
}


def _labels(tokens: list[str]) -> list[str]:
    """Unique tick labels (plotly merges equal category names): 'i: token'."""
    return [f"{i}: {t!r}"[:40] if t.strip() != t or not t else f"{i}: {t}"[:40] for i, t in enumerate(tokens)]


def _tick_axis(tokens: list[str]) -> dict:
    n = len(tokens)
    step = max(1, math.ceil(n / 64))
    vals = list(range(0, n, step))
    return {"tickmode": "array", "tickvals": vals, "ticktext": [_labels(tokens)[i] for i in vals]}


def attention_heatmap(matrix, tokens: list[str], title: str) -> go.Figure:
    """One head's T x T weights: rows = the query token, columns = the key it attends to."""
    m = np.asarray(matrix, dtype=np.float64)
    labels = _labels(tokens)
    n = len(tokens)
    hover = dict(hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.4f}<extra></extra>")
    if n <= 64:  # token names in the hover; for long texts they would double the figure's size
        hover = dict(customdata=[[[labels[i], labels[j]] for j in range(n)] for i in range(n)],
                     hovertemplate="query %{customdata[0]}<br>key %{customdata[1]}<br>weight %{z:.4f}<extra></extra>")
    fig = go.Figure(
        go.Heatmap(
            z=np.round(m, 4),
            x=list(range(n)),
            y=list(range(n)),
            colorscale="Blues",
            zmin=0,
            zmax=max(1e-9, float(np.nanmax(m)) if m.size else 1.0),
            **hover,
        )
    )
    size = min(900, max(380, 16 * len(tokens) + 180))
    # The title has the top band to itself, left-aligned (the toolbar sits top right; on a phone one
    # long line ran under it and into "key (attended to)"); the key axis title and the upright token
    # labels sit below it (slanted, they collided).
    # centred in the top band ('top' lifts a wrapped second line out of the figure); on a narrow
    # screen the figure script wraps it and gives it the lines it needs
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", y=1 - 18 / (size + 40), yanchor="middle",
                   yref="container", pad=dict(l=6), font=dict(size=15)),
        height=size + 40,
        margin=dict(l=10, r=10, t=160, b=10),
        xaxis=dict(title=dict(text="key (attended to)", standoff=4), side="top", tickangle=-90,
                   tickfont=dict(size=10), **_tick_axis(tokens)),
        yaxis=dict(title="query (attending)", autorange="reversed", tickfont=dict(size=10), **_tick_axis(tokens)),
    )
    return notice(fig, heatmap_notice(m, tokens))


def heatmap_notice(m: np.ndarray, tokens: list[str]) -> str:
    """What this head does, read off its weights: where most rows put their largest weight."""
    n = len(tokens)
    if n < 2 or m.shape != (n, n):
        return ""
    best = np.nanargmax(np.nan_to_num(m, nan=-1.0), axis=1)
    counts = {"itself": int(sum(best[i] == i for i in range(n))),
              "the previous token": int(sum(i > 0 and best[i] == i - 1 for i in range(n))),
              "the first token": int(sum(best[i] == 0 for i in range(1, n)))}
    where, k = max(counts.items(), key=lambda kv: kv[1])
    top_key = int(np.bincount(best, minlength=n).argmax())
    said = (f"{k} of {n} tokens put their largest weight on {where}" if k >= n / 3 else
            f"{int(np.bincount(best, minlength=n)[top_key])} of {n} tokens look most at {tokens[top_key]!r} "
            f"(position {top_key})")
    return f"{said}; each row sums to 1, so a dark cell takes weight from the rest of its row."


def summary_grid(summary: dict, top: dict | None = None) -> go.Figure:
    """One heatmap per metric, layers (rows) x heads (columns), so outlier heads stand out."""
    names = [k for k in SUMMARY_TITLES if k in summary]
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[SUMMARY_TITLES[k] for k in names],
                        horizontal_spacing=0.03)
    for i, name in enumerate(names, start=1):
        z = np.asarray(summary[name], dtype=np.float64)
        fig.add_trace(
            go.Heatmap(
                z=z,
                colorscale="Viridis_r" if name == "entropy" else "Viridis",
                showscale=False,
                zmin=0,
                zmax=None if name == "entropy" else 1,
                hovertemplate=f"{SUMMARY_TITLES[name]}<br>layer %{{y}}, head %{{x}}<br>%{{z:.3f}}<extra></extra>",
            ),
            row=1,
            col=i,
        )
        # ticks spaced for the width (on a phone, one label per head ran into the next); hover names each head
        fig.update_xaxes(title_text="head", row=1, col=i, nticks=min(z.shape[1], 6))
        fig.update_yaxes(autorange="reversed", row=1, col=i, showticklabels=i == 1,
                         title_text="layer" if i == 1 else None)
    n_layers = len(summary[names[0]])
    fig.update_layout(height=min(900, max(300, 18 * n_layers + 140)), margin=dict(l=10, r=10, t=60, b=10),
                      title="Per-head summary (averaged over query tokens). Bright = high; entropy: bright = focused.")
    if "entropy" not in summary:
        return fig
    ent = np.asarray(summary["entropy"], dtype=np.float64)
    lo = np.unravel_index(np.nanargmin(ent), ent.shape)
    hi = np.unravel_index(np.nanargmax(ent), ent.shape)
    return notice(fig, f"the most focused head is layer {lo[0]}, head {lo[1]} ({ent[lo]:.2f} bits) and the most "
                       f"spread out layer {hi[0]}, head {hi[1]} ({ent[hi]:.2f} bits): heads in one model do "
                       "different jobs, which is why the book looks at them one by one.")


def math_matrices(payload: dict, names=("Q", "K", "scores", "weights", "model_weights", "output")) -> go.Figure:
    """The step-by-step matrices side by side, each titled with its name and shape."""
    mats = {m["name"]: m for m in payload["matrices"]}
    chosen = [mats[n] for n in names if n in mats]
    cols = 3
    rows = math.ceil(len(chosen) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"{m['name']} {tuple(m['shape'])}" for m in chosen],
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    for i, m in enumerate(chosen):
        z = np.array([[np.nan if v is None else v for v in row] for row in m["data"]], dtype=np.float64)
        square = m["shape"][0] == m["shape"][1]
        fig.add_trace(
            go.Heatmap(z=z, colorscale="Blues" if m["name"] in ("weights", "model_weights") else "RdBu",
                       zmid=None if m["name"] in ("weights", "model_weights") else 0, showscale=False,
                       hovertemplate=f"{m['name']}[%{{y}}, %{{x}}] = %{{z:.4f}}<extra>{m['what']}</extra>"),
            row=i // cols + 1, col=i % cols + 1,
        )
        tokens = payload.get("tokens") or []
        # Rows are tokens in every matrix (and so are columns of the T x T ones): label them by token.
        ticks = _tick_axis(tokens) if tokens and len(tokens) == m["shape"][0] else {}
        fig.update_yaxes(autorange="reversed", row=i // cols + 1, col=i % cols + 1, **ticks)
        if square:
            fig.update_xaxes(scaleanchor=None, row=i // cols + 1, col=i % cols + 1,
                             **({**ticks, "tickangle": -45} if ticks else {}))
    fig.update_layout(height=330 * rows + 60, margin=dict(l=10, r=10, t=60, b=10),
                      title=f"Layer {payload['layer']}, head {payload['head']}: rows are tokens; "
                            f"d_k = {payload['head_dim']}")
    diff = payload.get("max_abs_diff")
    if diff is None:
        return fig
    return notice(fig, f"softmax(QK^T / sqrt({payload['head_dim']})) computed here matches the model's own weights to "
                       f"{diff:.1e}: 'weights' and 'model_weights' are the same picture.")


def query_bars(payload: dict) -> go.Figure:
    """For the chosen query token: its dot product with every key, and the softmax weights."""
    labels = _labels(payload["tokens"])
    fig = make_subplots(rows=1, cols=2, subplot_titles=("q . k (raw scores)", "softmax weights"))
    fig.add_trace(go.Bar(x=labels, y=payload["query_key_dot_products"], marker_color="#888"), row=1, col=1)
    fig.add_trace(go.Bar(x=labels, y=payload["query_weights"], marker_color="#1f77b4"), row=1, col=2)
    fig.update_layout(height=360, showlegend=False, margin=dict(l=10, r=10, t=60, b=10),
                      title=f"Query token {payload['query_index']}: {payload['query_token']!r}")
    fig.update_xaxes(tickangle=-60)
    return fig


def sinusoid_heatmap(pe) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=np.asarray(pe), colorscale="RdBu", zmid=0,
                               hovertemplate="position %{y}, dim %{x}: %{z:.3f}<extra></extra>"))
    fig.update_layout(title="Sinusoidal positional encoding (Vaswani et al.): position x dimension",
                      xaxis_title="dimension", yaxis_title="position", height=420,
                      yaxis=dict(autorange="reversed"), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def similarity_heatmap(sim, title: str) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=np.asarray(sim), colorscale="Viridis", zmin=-1, zmax=1,
                               hovertemplate="positions %{y} and %{x}: cosine %{z:.3f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="position", yaxis_title="position", height=460,
                      yaxis=dict(autorange="reversed"), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def rotary_plot(summary: dict) -> go.Figure:
    inv = summary["inv_freq"]
    fig = go.Figure(go.Scatter(x=list(range(len(inv))), y=inv, mode="lines+markers",
                               customdata=summary["wavelength_tokens"],
                               hovertemplate="pair %{x}: %{y:.3g} rad/token<br>period %{customdata:.1f} tokens<extra></extra>"))
    fig.update_layout(title=f"Rotary frequencies per dimension pair (head_dim {summary['head_dim']}, "
                            f"base {summary['rope_theta']:g}): fast pairs see word order, slow pairs see distance",
                      xaxis_title="dimension pair i", yaxis_title="theta_i (radians per token, log scale)",
                      yaxis_type="log", height=400, margin=dict(l=10, r=10, t=60, b=10))
    return fig
