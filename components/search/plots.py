"""Plotly figures for the Semantic search tab (built from the backend's plain dicts)."""

from __future__ import annotations

import plotly.graph_objects as go

import html

from components.shell import notice, short


def _label(text: str) -> str:
    """Corpus text in a plotly label: plotly reads <a href>, <b> ... in labels, so escape it."""
    return html.escape(short(text, 60))



def map_figure(m: dict) -> go.Figure:
    """The corpus in 2-D (PCA), the query as a star, its neighbours ringed and numbered."""
    fig = go.Figure()
    fig.add_trace(go.Scattergl(
        x=m["x"], y=m["y"], mode="markers", name="passages",
        marker=dict(size=5, color="rgba(120,130,160,0.45)"),
        text=[_label(t) for t in m["titles"]], hovertemplate="%{text}<extra></extra>"))
    if m["neighbours"]:
        nb = m["neighbours"]
        fig.add_trace(go.Scatter(
            x=[p["x"] for p in nb], y=[p["y"] for p in nb], mode="markers+text",
            name="top results", text=[str(i + 1) for i in range(len(nb))],
            textposition="top center",
            marker=dict(size=11, color="rgba(230,120,20,0.9)", line=dict(width=1, color="black")),
            customdata=[_label(p["title"]) for p in nb],
            hovertemplate="#%{text}: %{customdata}<extra></extra>"))
    if m.get("query"):
        fig.add_trace(go.Scatter(
            x=[m["query"]["x"]], y=[m["query"]["y"]], mode="markers", name="query",
            marker=dict(size=18, symbol="star", color="crimson", line=dict(width=1, color="black")),
            hovertemplate="query<extra></extra>"))
    ev = m.get("explained_variance", [0, 0])
    title = f"Corpus map: {m['method']} of the embeddings"
    if m.get("downsampled"):
        title += f" ({m['shown_points']:,} of {m['total_points']:,} points shown)"
    fig.update_layout(
        title=title, height=460, margin=dict(l=40, r=10, t=50, b=40),
        xaxis_title=f"PC1 ({ev[0]:.0%} of variance)", yaxis_title=f"PC2 ({ev[1]:.0%})",
        legend=dict(orientation="h", y=-0.15))
    if not m.get("query"):
        return notice(fig, f"passages that say similar things sit near each other; these two axes hold only "
                           f"{sum(ev[:2]):.0%} of the embeddings' variance.")
    return notice(fig, f"the query (star) and its top results (numbered) are nearest in all the embedding's "
                       f"dimensions; this map keeps only {sum(ev[:2]):.0%} of the variance, so they may look apart here.")


FAMILY_STYLE = {"Flat (exact)": ("#444444", "square"), "SQ8 (8-bit scalar)": ("#8c564b", "diamond"),
                "HNSW": ("#1f77b4", "circle"), "IVF-Flat": ("#2ca02c", "triangle-up"),
                "IVF-PQ": ("#d62728", "x")}


def tradeoff_figure(rows: list[dict]) -> go.Figure:
    """Query latency vs recall@k, one point per index configuration.

    Points of a small corpus sit on top of each other, so they carry no text labels (those
    overlapped and were cut: "FlatHNSW..."): each is a legend entry below the plot, with a
    colour and a symbol per index family, and its full numbers on hover."""
    fig = go.Figure()
    for r in rows:
        color, symbol = FAMILY_STYLE.get(r.get("index_type"), ("#7f7f7f", "circle"))
        fig.add_trace(go.Scatter(
            x=[r["query_ms_median"]], y=[r["recall_at_k"]], mode="markers",
            name=r["label"],
            marker=dict(size=8 + min(30, r["memory_mb"] ** 0.5 * 3), color=color, symbol=symbol,
                        opacity=0.75, line=dict(width=1, color="black")),
            hovertemplate=(f"{r['label']}<br>latency %{{x:.3f}} ms<br>recall %{{y:.3f}}<br>"
                           f"memory {r['memory_mb']:.2f} MB<br>build {r['build_s']:.3f} s"
                           "<extra></extra>")))
    k = rows[0]["recall_k"] if rows else 10
    fig.update_layout(title="Speed / recall trade-off (marker size ~ memory)", height=480,
                      xaxis_title="median single-query latency (ms)",
                      yaxis_title=f"recall@{k} vs exact", showlegend=True,
                      legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0,
                                  font=dict(size=11)),
                      margin=dict(l=50, r=10, t=50, b=40))
    fig.update_yaxes(range=[min([r["recall_at_k"] for r in rows] + [0.8]) - 0.05, 1.03])
    if not rows:
        return fig
    fastest = min(rows, key=lambda r: r["query_ms_median"])
    exact = next((r for r in rows if r.get("index_type") == "Flat (exact)"), None)
    claim = fastest.get("fastest_claim")
    if claim is None or claim["claimed"]:
        said = (f"the fastest configuration, {fastest['label']}, answers in {fastest['query_ms_median']:.3f} ms "
                f"with recall@{k} {fastest['recall_at_k']:.2f}" + (f" ({claim['why']})" if claim else ""))
    else:
        said = (f"no configuration is named the fastest: {claim['why']}; the lowest median is {fastest['label']}'s, "
                f"{fastest['query_ms_median']:.3f} ms with recall@{k} {fastest['recall_at_k']:.2f}")
    if exact is not None and exact is not fastest:
        said += f"; the exact index takes {exact['query_ms_median']:.3f} ms and finds every true neighbour"
    return notice(fig, said + ". " + tradeoff_lesson(rows, exact))


def tradeoff_lesson(rows: list[dict], exact: dict | None) -> str:
    """What these numbers show about approximate indexes, true for this corpus: they trade recall
    for speed only where they are both faster and less exact than Flat."""
    approx = [r for r in rows if r is not exact]
    if exact is None or not approx:
        return "Approximate indexes trade recall for speed on large corpora."
    faster = [r for r in approx if r["query_ms_median"] < exact["query_ms_median"]]
    lossy = [r for r in approx if r["recall_at_k"] < 0.9995]
    if not faster:
        return (f"On {'this small corpus' if not lossy else 'this corpus'} no approximate index beats the exact one: "
                "scanning every vector is cheap here, and HNSW / IVF only pay off on large corpora "
                "(tens of thousands of passages), where they give up some recall for speed.")
    if not lossy:
        return "Here the faster approximate indexes lose no recall: this corpus is easy to search."
    return "Approximate indexes trade recall for speed: the faster ones here miss some true neighbours."


def map_caption(m: dict) -> str:
    """What the map can and cannot say: the share of variance it shows, and why the query may
    sit far from its hits (they are near in all dimensions, not in these two)."""
    ev = m.get("explained_variance") or [0.0, 0.0]
    shown = sum(ev[:2])
    dims = m.get("dims") or "all"
    return (f"*The map flattens {dims} dimensions to the 2 along which the corpus varies most "
            f"(PCA): they hold only **{shown:.0%}** of the variance (PC1 {ev[0]:.0%}, PC2 "
            f"{ev[1]:.0%}). Nearness is measured in all {dims} dimensions, so the query (star) "
            f"can sit far from its hits (numbered) here and still be nearest to them: most of what "
            f"makes them close is in the {1 - shown:.0%} the map cannot show.*")
