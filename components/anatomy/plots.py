"""Plotly figures for the Anatomy tab (plain data in, figures out; no model code here)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.shell import notice

FLOOR = 1e-10  # a log axis cannot show 0: exact layers are drawn here and labelled "exact"


def _labels(tokens: list[str]) -> list[str]:
    """Unique labels (plotly merges equal category names): 'i: token'."""
    return [f"{i}: {t}"[:30] for i, t in enumerate(tokens)]


def layer_diffs(layers: list[dict], tolerance: float, title: str) -> go.Figure:
    """Max |ours - model's| per hidden state, log scale, against the tolerance line."""
    names = [row["name"] for row in layers]
    values = [row["max_abs_diff"] for row in layers]
    colors = ["#2a9d8f" if v < tolerance else "#e63946" for v in values]
    fig = go.Figure(go.Bar(
        x=names, y=[max(v, FLOOR) for v in values], marker_color=colors,
        text=["exact" if v == 0 else f"{v:.1e}" for v in values], textposition="outside",
        hovertemplate="%{x}<br>max abs diff %{text}<extra></extra>",
    ))
    fig.add_hline(y=tolerance, line_dash="dash", line_color="#e63946",
                  annotation_text=f"tolerance {tolerance:.0e}", annotation_position="top left")
    fig.update_layout(title=title, height=360, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(type="log", title="max |ours − model's|", range=[-10.5, 0]))
    if not values:
        return fig
    below = sum(1 for v in values if v < tolerance)
    return notice(fig, f"{below} of {len(values)} hidden states recomputed by hand match the model's within "
                       f"{tolerance:.0e} (largest gap {max(values):.1e}): the block is just these few operations.")


def residual_stream(stream: dict, title: str) -> go.Figure:
    """Three panels: the stream's norm, what attention and the MLP add, the turn between layers."""
    n = len(stream["norm"])
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.07, subplot_titles=(
        "|residual stream| after each layer", "size of what each sub-layer adds", "cosine with the previous layer"))
    x_states = ["emb"] + [str(i) for i in range(1, n)]
    x_layers = [str(i) for i in range(1, n)]
    fig.add_trace(go.Scatter(x=x_states, y=stream["norm"], name=f"token {stream['token_index']}",
                             mode="lines+markers"), row=1, col=1)
    fig.add_trace(go.Scatter(x=x_states, y=stream["mean_norm"], name="mean over tokens",
                             mode="lines", line_dash="dot"), row=1, col=1)
    fig.add_trace(go.Bar(x=x_layers, y=stream["attn_added"], name="attention adds"), row=1, col=2)
    fig.add_trace(go.Bar(x=x_layers, y=stream["mlp_added"], name="MLP adds"), row=1, col=2)
    fig.add_trace(go.Scatter(x=x_layers, y=stream["cosine_prev"], name="cos(h_l, h_l−1)",
                             mode="lines+markers"), row=1, col=3)
    fig.update_layout(title=title, height=380, barmode="group", margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(orientation="h", y=-0.15))
    fig.update_xaxes(title_text="layer")
    norms = stream["norm"]
    if len(norms) < 2 or not norms[0]:
        return fig
    verb = "grows" if norms[-1] >= norms[0] else "shrinks"
    return notice(fig, f"token {stream['token_index']}'s residual stream {verb} from {norms[0]:.1f} after the "
                       f"embedding to {norms[-1]:.1f} after the last layer ({norms[-1] / norms[0]:.1f}x): each "
                       "sub-layer adds to the stream rather than replacing it.")


MAY_ATTEND, MASKED = "#a1d99b", "#3f3f46"  # the mask's two values: a key a query may look at, or not
MASK_LEGEND = {1: "may attend (1)", 0: "masked (0: score set to −∞)"}


def masked_count(mask: list[list[int]]) -> tuple[int, int]:
    """(masked query-key pairs, all pairs) of a 0/1 mask (1 = may attend)."""
    total = sum(len(row) for row in mask)
    return total - sum(int(v) for row in mask for v in row), total


def masked_attention(masks: dict, title: str) -> go.Figure:
    """Scores before the mask, the mask, the softmax after it: three heatmaps of one head. The mask
    has two colours only, named in a legend, so "nothing masked" never looks like "all masked"."""
    labels = _labels(masks["tokens"])
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.05, subplot_titles=(
        "scores QKᵀ/√d before the mask", "mask (1 = may look)", "softmax weights after the mask"))
    hover = "query %{y}<br>key %{x}<br>%{z:.4f}<extra></extra>"
    fig.add_trace(go.Heatmap(z=masks["scores"], x=labels, y=labels, colorscale="RdBu_r", zmid=0,
                             showscale=False, hovertemplate=hover), row=1, col=1)
    words = [[MASK_LEGEND[int(v)] for v in row] for row in masks["mask"]]
    fig.add_trace(go.Heatmap(z=masks["mask"], x=labels, y=labels, zmin=0, zmax=1, showscale=False,
                             colorscale=[[0, MASKED], [0.5, MASKED], [0.5, MAY_ATTEND], [1, MAY_ATTEND]],
                             customdata=words, hovertemplate="query %{y}<br>key %{x}<br>%{customdata}<extra></extra>"),
                  row=1, col=2)
    for value in (1, 0):  # the legend: one square of each colour, whether or not this input has it
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=MASK_LEGEND[value], showlegend=True,
                                 marker=dict(symbol="square", size=14, color=MAY_ATTEND if value else MASKED,
                                             line=dict(color="#999", width=1))), row=1, col=2)
    fig.add_trace(go.Heatmap(z=masks["weights"], x=labels, y=labels, colorscale="Blues", zmin=0,
                             showscale=False, hovertemplate=hover), row=1, col=3)
    size = min(660, max(400, 14 * len(labels) + 240))
    masked, total = masked_count(masks["mask"])
    fig.update_layout(title=f"{title}: {masked} of {total} query-key pairs masked", height=size,
                      margin=dict(l=10, r=10, t=130, b=10),
                      legend=dict(orientation="h", x=0.5, xanchor="center", y=1.0, yanchor="bottom",
                                  title_text="mask:", entrywidth=0, font=dict(size=12)))
    fig.update_annotations(yshift=28)  # the subplot titles sit above the legend row
    readable = len(labels) <= 40
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_yaxes(showticklabels=readable, row=1, col=1)
    fig.update_xaxes(tickangle=-60, showticklabels=readable)
    if masked:
        said = (f"{masked} of {total} pairs are masked: after the softmax those cells are exactly 0, so a token "
                "gets no information from the keys it may not look at.")
    else:
        said = "nothing is masked here: every token may look at every other one (a bidirectional encoder)."
    return notice(fig, said)


def logit_lens(lens: dict, title: str) -> go.Figure:
    """Layers (rows) x positions (columns): the top-1 next token and its probability; top-5 on hover."""
    cols = _labels_at(lens["tokens"], lens["positions"])
    rows = ["emb"] + [f"layer {i}" for i in lens["layers"][1:]]
    hover = [["<br>".join(f"{w!r}: {p:.3f}" for w, p in cell) for cell in row] for row in lens["top5"]]
    fig = go.Figure(go.Heatmap(
        z=lens["top1_prob"], x=cols, y=rows, colorscale="Viridis", zmin=0, zmax=1,
        text=[[t.strip() or repr(t) for t in row] for row in lens["top1"]], texttemplate="%{text}",
        textfont=dict(size=10), customdata=hover,
        hovertemplate="after %{y}, position %{x}<br>top-5 next tokens:<br>%{customdata}<extra></extra>",
        colorbar=dict(title="p(top-1)"),
    ))
    # The token axis sits on top, its labels slanted: the top margin makes room for them under the
    # title (they ran into it), ~0.7 of a label's length in 6-px characters, plus the title's line.
    top = 50 + int(max((len(c) for c in cols), default=4) * 6 * 0.72)
    fig.update_layout(title=dict(text=title, y=1, yanchor="top", yref="container", pad=dict(t=10)),
                      height=max(420, 22 * len(rows) + 140) + top - 60, margin=dict(l=10, r=10, t=top, b=10),
                      yaxis=dict(autorange="reversed"), xaxis=dict(side="top", tickangle=-45))
    probs = lens["top1_prob"]
    if not probs or not probs[-1]:
        return fig
    return notice(fig, lens_notice(lens))


def lens_notice(lens: dict) -> str:
    """What the lens shows, true for this model: with tied embeddings the embedding row only
    scores each input vector against its own row, so it "predicts" the input token itself."""
    probs = lens["top1_prob"]
    first, last = sum(probs[0]) / len(probs[0]), sum(probs[-1]) / len(probs[-1])
    echoes = lens.get("embedding_echoes_input")
    if lens.get("tied_embeddings") and echoes is not None and echoes >= 0.5:
        # two different numbers, each named: a share of positions, and an average probability
        return (f"read straight from the embeddings, the top-1 token is the input token itself at {echoes:.0%} of the "
                f"positions, and its top-1 probability averages {first:.0%} over all positions: the LM head is the embedding "
                f"matrix (tied weights), so that row only recognises each token, it predicts nothing. After the last "
                f"layer the top-1 is a next-token guess, its probability {last:.0%} on average: compare the layers "
                f"in between, not the first row.")
    how = ("the prediction sharpens as the layers add to the stream" if last > first
           else "the last layer spreads its probability over more candidates than the first rows do")
    return (f"the top-1 probability averages {first:.0%} read straight from the embeddings and {last:.0%} after the "
            f"last layer: {how}.")


def _labels_at(tokens: list[str], positions: list[int]) -> list[str]:
    return [f"{p}: {t}"[:30] for p, t in zip(positions, tokens)]


def parameter_budget(budget: dict, title: str) -> go.Figure:
    """Parameters per component: absolute (bar length) and as a percentage (label)."""
    rows = [r for r in budget["rows"] if r["parameters"] > 0]
    fig = go.Figure(go.Bar(
        x=[r["parameters"] for r in rows], y=[r["component"] for r in rows], orientation="h",
        text=[f"{r['parameters']:,} ({r['percent']:.1f}%)" for r in rows], textposition="auto",
        marker_color="#457b9d", hovertemplate="%{y}: %{x:,} parameters<extra></extra>",
    ))
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(autorange="reversed"), xaxis=dict(title="parameters"))
    if not rows:
        return fig
    big = max(rows, key=lambda r: r["parameters"])
    total = sum(r["parameters"] for r in rows)
    return notice(fig, f"{big['component']} holds the most parameters: {big['parameters']:,} of the {total:,} "
                       f"shown ({big['percent']:.1f}%).")
