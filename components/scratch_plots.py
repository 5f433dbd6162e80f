"""Plotly figures for the From scratch tab, built from /train_tokenizer's plain data."""

from __future__ import annotations

import plotly.graph_objects as go

TRAINED, EMBEDDER, DECODER = "#e07b14", "#1f77b4", "#2ca02c"


def lengths_figure(data: dict) -> go.Figure:
    """How many vocabulary tokens have each length in characters ('##' not counted)."""
    dist = data["lengths"]
    xs = [r["length"] for r in dist["lengths"]]
    ys = [r["tokens"] for r in dist["lengths"]]
    fig = go.Figure(go.Bar(x=xs, y=ys, marker_color=TRAINED, text=ys, textposition="outside", cliponaxis=False,
                           hovertemplate="%{y} tokens of %{x} characters<extra></extra>"))
    fig.update_layout(title=f"Token lengths in the {data['algorithm']} vocabulary ({dist['total']:,} tokens, "
                            f"{dist['special']} special)", height=320, margin=dict(l=50, r=10, t=45, b=40),
                      xaxis_title="characters per token", yaxis_title="tokens")
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(range=[0, max(ys, default=1) * 1.18])  # room for the count above the tallest bar
    return fig


def tokens_per_word_figure(rows: list[dict]) -> go.Figure | None:
    """Tokens per word, on the sentence and on the corpus, per tokenizer (fewer: a better fit)."""
    rows = [r for r in rows if "error" not in r]
    if not rows:
        return None
    names = [f"{r['what']}<br>({r['vocab_size']:,} tokens)" for r in rows]
    fig = go.Figure()
    for key, label, colour in (("corpus", "on the training text (first 20,000 characters)", "#7f7f7f"),
                               ("sentence", "on your sentence", TRAINED)):
        fig.add_trace(go.Bar(x=names, y=[r[key] for r in rows], name=label, marker_color=colour,
                             text=[r[key] for r in rows], textposition="outside", cliponaxis=False))
    fig.update_layout(barmode="group", title="Tokens per word: fewer means the tokenizer fits the text better",
                      height=340, margin=dict(l=50, r=10, t=45, b=40), yaxis_title="tokens per word",
                      legend=dict(orientation="h", y=-0.3))
    top = max((r[k] or 0) for r in rows for k in ("corpus", "sentence"))
    fig.update_yaxes(range=[0, top * 1.2])
    return fig


def gpt_loss_figure(losses: list[float], evals: list[dict], total_steps: int | None = None,
                    entropy: float | None = None) -> go.Figure:
    """The tiny GPT's loss per training step and its validation loss every few steps (live)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(range(1, len(losses) + 1)), y=losses, mode="lines", name="train loss (per step)",
                             line=dict(color=TRAINED, width=1.5)))
    if evals:
        fig.add_trace(go.Scatter(x=[e["step"] for e in evals], y=[e["val_loss"] for e in evals],
                                 mode="lines+markers", name="validation loss", line=dict(color=EMBEDDER, width=2)))
    if entropy is not None:
        fig.add_hline(y=entropy, line_dash="dash", line_color="#7f7f7f",
                      annotation_text=f"unigram entropy {entropy:.2f}: a model that ignores context",
                      annotation_position="top right")
    fig.update_layout(title="Tiny GPT: loss (nats per token) as it trains", height=340,
                      margin=dict(l=50, r=10, t=45, b=40), xaxis_title="step", yaxis_title="loss",
                      legend=dict(orientation="h", y=-0.25))
    if total_steps:
        fig.update_xaxes(range=[0, total_steps])
    return fig
