"""Plotly figures for the Interventions tab (plain data in, figures out; no model code here)."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice

BEFORE, AFTER, FLIP = "#457b9d", "#e76f51", "#e63946"


def _label(token: str) -> str:
    return repr(token)[1:-1] if token.strip() == token and token else repr(token)


def _quoted(token: str) -> str:
    """A token in a sentence, quoted once (repr already quotes one with spaces around it)."""
    label = _label(token)
    return label if label[:1] in "'\"" else f"'{label}'"


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
                      # the legend below the axis title, not on it: placed in the figure's own pixels
                      margin=dict(l=10, r=40, t=60, b=80),
                      legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", traceorder="reversed"),
                      xaxis=dict(title="probability of being the next token", tickformat=".0%"))
    if not top:
        return fig
    first = max(top, key=lambda t: t["p_before"])
    after = max(top, key=lambda t: t["p_after"])
    change = ("the intervention changes the top next token: "
              f"{_quoted(first['token'])} ({first['p_before']:.0%} before) gives way to {_quoted(after['token'])} "
              f"({after['p_after']:.0%} after)." if after is not first else
              f"the top next token stays {_quoted(first['token'])}; its probability goes from "
              f"{first['p_before']:.0%} to {first['p_after']:.0%}.")
    return notice(fig, change)


def flips(rows: list[dict], title: str) -> go.Figure:
    """Along the text: the KL at each position (bars), red where the top-1 next token changed."""
    x = [f"{r['position']}: {r['token']}"[:24] for r in rows]
    colors = [FLIP if r["flipped"] else BEFORE for r in rows]
    words = [f"next: {r['next_before']!r} → {r['next_after']!r}" + (" (flipped)" if r["flipped"] else "")
             for r in rows]
    fig = go.Figure(go.Bar(x=x, y=[r["kl"] for r in rows], marker_color=colors, customdata=words,
                           text=["flip" if r["flipped"] else "" for r in rows], textposition="outside",
                           hovertemplate="%{x}<br>KL %{y:.4f}<br>%{customdata}<extra></extra>"))
    top = max((r["kl"] for r in rows), default=0.0)
    fig.update_traces(cliponaxis=False, textangle=0)  # the "flip" over the tallest bar was cut off
    fig.update_layout(title=title, height=340, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(title="KL(before ‖ after), nats", range=[0, top * 1.18 if top > 0 else 1]),
                      xaxis=dict(tickangle=-35))
    if not rows:
        return fig
    worst = max(rows, key=lambda r: r["kl"])
    flipped = sum(1 for r in rows if r["flipped"])
    return notice(fig, f"the prediction changed most after {_quoted(worst['token'])} (position {worst['position']}, "
                       f"KL {worst['kl']:.3f} nats); the top-1 next token flipped at {flipped} of {len(rows)} positions.")


def token_cosine(tokens: list[str], cosines: list[float], title: str) -> go.Figure:
    """Encoder: how far each token's last hidden state turned (1 - cosine before/after)."""
    x = [f"{i}: {t}"[:24] for i, t in enumerate(tokens)]
    fig = go.Figure(go.Bar(x=x, y=[1 - c for c in cosines], marker_color=AFTER,
                           hovertemplate="%{x}<br>1 − cosine %{y:.5f}<extra></extra>"))
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=60, b=10),
                      yaxis=dict(title="1 − cosine(before, after)"), xaxis=dict(tickangle=-35))
    if not cosines:
        return fig
    i = max(range(len(cosines)), key=lambda j: 1 - cosines[j])
    return notice(fig, f"token {_quoted(tokens[i])} (position {i}) turned most: 1 − cosine {1 - cosines[i]:.4f}. "
                       "Small values everywhere mean the other heads and layers make up for what was removed.")


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
    if len(heads) < 2:
        return fig
    share = heads[0]["score"] / (sum(h["score"] for h in heads) or 1)
    return notice(fig, f"head {heads[0]['head']} matters most ({heads[0]['score']:.2g}, {share:.0%} of the layer's "
                       f"total); the last, head {heads[-1]['head']}, changes {heads[-1]['score']:.2g}: heads are not equal.")
