"""Plotly figures for the Interventions tab (plain data in, figures out; no model code here)."""

from __future__ import annotations

import plotly.graph_objects as go

BEFORE, AFTER, FLIP = "#457b9d", "#e76f51", "#e63946"


def _label(token: str) -> str:
    return repr(token)[1:-1] if token.strip() == token and token else repr(token)


def next_token(top: list[dict], title: str) -> go.Figure:
    """The next token's top candidates: probability before and after, side by side."""
    labels = [f"{_label(t['token'])}" for t in top][::-1]
    fig = go.Figure()
    # horizontal groups stack their first trace at the bottom: "after" first puts "as it is" on top
    for key, name, color in (("p_after", "with the spec", AFTER), ("p_before", "as it is", BEFORE)):
        values = [t[key] for t in top][::-1]
        fig.add_trace(go.Bar(y=labels, x=values, name=name, orientation="h", marker_color=color,
                             text=[f"{v:.1%}" for v in values], textposition="outside", cliponaxis=False,
                             hovertemplate="%{y}<br>" + name + ": %{x:.4f}<extra></extra>"))
    fig.update_layout(title=title, barmode="group", height=max(320, 46 * len(top) + 120),
                      margin=dict(l=10, r=40, t=60, b=10), legend=dict(orientation="h", y=-0.08, traceorder="reversed"),
                      xaxis=dict(title="probability of being the next token", tickformat=".0%"))
    return fig


def flips(rows: list[dict], title: str) -> go.Figure:
    """Along the text: the KL at each position (bars), red where the top-1 next token changed."""
    x = [f"{r['position']}: {r['token']}"[:24] for r in rows]
    colors = [FLIP if r["flipped"] else BEFORE for r in rows]
    words = [f"next: {r['next_before']!r} → {r['next_after']!r}" + (" (flipped)" if r["flipped"] else "")
             for r in rows]
    fig = go.Figure(go.Bar(x=x, y=[r["kl"] for r in rows], marker_color=colors, customdata=words,
                           text=["flip" if r["flipped"] else "" for r in rows], textposition="outside",
                           hovertemplate="%{x}<br>KL %{y:.4f}<br>%{customdata}<extra></extra>"))
    fig.update_layout(title=title, height=340, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(title="KL(before ‖ after), nats"), xaxis=dict(tickangle=-35))
    return fig


def token_cosine(tokens: list[str], cosines: list[float], title: str) -> go.Figure:
    """Encoder: how far each token's last hidden state turned (1 - cosine before/after)."""
    x = [f"{i}: {t}"[:24] for i, t in enumerate(tokens)]
    fig = go.Figure(go.Bar(x=x, y=[1 - c for c in cosines], marker_color=AFTER,
                           hovertemplate="%{x}<br>1 − cosine %{y:.5f}<extra></extra>"))
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(title="1 − cosine(before, after)"), xaxis=dict(tickangle=-35))
    return fig


def sweep(result: dict, title: str) -> go.Figure:
    """The heads of one layer, most important first: what removing each one alone changes."""
    heads = result["heads"]
    decoder = result["metric"] == "kl_last"
    x = [f"head {h['head']}" for h in heads]
    y = [h["score"] for h in heads]
    colors = [FLIP if decoder and h.get("top1_changed") else BEFORE for h in heads]
    fig = go.Figure(go.Bar(x=x, y=y, marker_color=colors, text=[f"{v:.2g}" for v in y], textposition="outside",
                           cliponaxis=False, hovertemplate="%{x}<br>%{y:.5f}<extra></extra>"))
    fig.update_layout(title=title, height=360, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(title="KL at the last position, nats" if decoder
                                 else "1 − cosine of the sentence vector"),
                      xaxis=dict(title="ranked, most important first"))
    return fig
