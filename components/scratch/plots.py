"""Plotly figures for the From scratch tab, built from /train_tokenizer's plain data."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.shell import md_text, notice

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


def seq2seq_loss_figure(losses: list[float], evals: list[dict], total_steps: int | None = None) -> go.Figure:
    """The tiny encoder-decoder's train loss per step, validation loss and validation exact match (live)."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=list(range(1, len(losses) + 1)), y=losses, mode="lines", name="train loss (per step)",
                             line=dict(color=TRAINED, width=1.5)))
    if evals:
        steps = [e["step"] for e in evals]
        fig.add_trace(go.Scatter(x=steps, y=[e["val_loss"] for e in evals], mode="lines+markers",
                                 name="validation loss", line=dict(color=EMBEDDER, width=2)))
        fig.add_trace(go.Scatter(x=steps, y=[100 * e["val_exact_match"] for e in evals], mode="lines+markers",
                                 name="validation exact match (%)", line=dict(color=DECODER, width=2, dash="dot")),
                      secondary_y=True)
    fig.update_layout(title="Tiny encoder-decoder: loss and exact match as it trains", height=360,
                      margin=dict(l=50, r=50, t=45, b=40), legend=dict(orientation="h", y=-0.25))
    fig.update_xaxes(title_text="step", range=[0, total_steps] if total_steps else None)
    fig.update_yaxes(title_text="loss (nats per token)", secondary_y=False)
    fig.update_yaxes(title_text="exact match (%)", range=[0, 105], secondary_y=True)
    if len(evals) >= 2:
        a, b = evals[0], evals[-1]
        notice(fig, f"validation exact match went from {a['val_exact_match']:.0%} at step {a['step']:,} to "
                    f"{b['val_exact_match']:.0%} at step {b['step']:,}, and the validation loss from {a['val_loss']:.2f} "
                    f"to {b['val_loss']:.3f}: a translation is only right when every one of its 10 characters is.")
    return fig


def _ticks(tokens: list[str]) -> dict:
    """Integer positions labelled with the tokens (a repeated token keeps its own row/column)."""
    return dict(tickmode="array", tickvals=list(range(len(tokens))), ticktext=[_plain(t) for t in tokens],
                tickfont=dict(size=12))


def _plain(token: str) -> str:
    """A token as Plotly shows it literally: its labels read HTML-like tags ('</s>' would vanish)."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(" ", "␣")


def attention_heatmap(matrix, rows: list[str], cols: list[str], title: str, row_title: str, col_title: str,
                      what: str = "", colour: str = "Blues") -> go.Figure:
    """One head's attention: rows attend to columns; each row sums to 1."""
    z = [[round(float(v), 4) for v in r] for r in matrix]
    custom = [[[_plain(rows[i]), _plain(cols[j])] for j in range(len(cols))] for i in range(len(rows))]
    fig = go.Figure(go.Heatmap(z=z, x=list(range(len(cols))), y=list(range(len(rows))), zmin=0, zmax=1,
                               colorscale=colour, customdata=custom, colorbar=dict(title="weight", thickness=12),
                               hovertemplate="%{customdata[0]} looks at %{customdata[1]}: %{z:.4f}<extra></extra>"))
    fig.update_layout(title=dict(text=title, x=0.5, xanchor="center", y=0.99, yanchor="top", font=dict(size=14)),
                      height=max(320, 26 * len(rows) + 200), margin=dict(l=10, r=10, t=130, b=10),
                      xaxis=dict(title=dict(text=col_title, standoff=4), side="top", tickangle=-50, **_ticks(cols)),
                      yaxis=dict(title=row_title, autorange="reversed", **_ticks(rows)))
    return notice(fig, what)


def zip_line(r: dict) -> str:
    """What a downloaded model zip holds, in one line."""
    return (f"`{md_text(r['path'].rsplit('/', 1)[-1])}`: {r['megabytes']} MB, {r['parameters']:,} parameters, "
            f"{r['steps_run']:,} steps; files: {md_text(', '.join(r['files']))}.")
