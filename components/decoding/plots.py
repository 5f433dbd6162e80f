"""Plotly figures for the Decoding tab, built from the backend's plain data."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice

STATUS_COLORS = {"root": "#444444", "kept": "#1f77b4", "eos": "#2ca02c", "pruned": "#c7c7c7"}
TEMP_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]



def _pct(p: float) -> str:
    """A share as a percentage with the digits it needs: 46%, 4.2%, 0.37% (never a misleading 0%)."""
    p = float(p)
    if p >= 0.095 or p == 0:
        return f"{p:.0%}"
    return f"{p:.1%}" if p >= 0.0095 else f"{p * 100:.2g}%"

def show_token(token: str) -> str:
    """A token as a readable label: spaces and newlines made visible."""
    return repr(token)[1:-1].replace(" ", "␣") or "∅"


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    # The legend goes under the x-axis title (at the top right it ran into a long title).
    fig.update_layout(title=title, height=height + 50, margin=dict(l=50, r=20, t=50, b=110), template="plotly_white",
                      legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left"))
    return fig


def empty_figure(message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font=dict(size=14))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, "", height=260).update_layout(height=260, margin=dict(b=20))


def temperature_figure(dist: dict) -> go.Figure:
    """The book's temperature figure on the real model: top tokens' probability at each temperature."""
    labels = [show_token(t) for t in dist["tokens"]]
    fig = go.Figure()
    for i, t in enumerate(dist["temperatures"]):
        fig.add_trace(go.Bar(
            x=labels, y=t["probs"], name=f"T = {t['temperature']:g} (entropy {t['entropy']:.2f} nats)",
            marker_color=TEMP_COLORS[i % len(TEMP_COLORS)],
            hovertemplate="%{x}: %{y:.4f}<extra>T=" + f"{t['temperature']:g}" + "</extra>",
        ))
    fig.update_layout(barmode="group", xaxis_title=f"top {len(labels)} next tokens (by the model's own probability)",
                      yaxis_title="probability")
    where = f"before generated token #{dist['step']}" if dist.get("step") is not None else f"after {dist['position']} tokens"
    return notice(_layout(fig, f"Next-token distribution {where}, at several temperatures"), temperature_notice(dist))


def temperature_notice(dist: dict) -> str:
    """The top token's share at the lowest and highest temperature shown (its rank never changes:
    dividing the logits by T keeps their order)."""
    temps = sorted(dist.get("temperatures") or [], key=lambda t: t["temperature"])
    if not temps or not dist.get("tokens") or not temps[0]["probs"]:
        return ""
    lo, hi = temps[0], temps[-1]
    top = show_token(dist["tokens"][0])
    if len(temps) == 1:
        return f"'{top}' takes {_pct(lo['probs'][0])} of the probability at T = {lo['temperature']:g}."
    return (f"the top token '{top}' takes {_pct(lo['probs'][0])} of the probability at T = {lo['temperature']:g} "
            f"but {_pct(hi['probs'][0])} at T = {hi['temperature']:g}: a higher temperature flattens the "
            f"distribution (entropy {lo['entropy']:.2f} → {hi['entropy']:.2f} nats), so sampling picks rarer tokens.")


def cumulative_title(cum: dict, strategy: str = "sample", survivors: int | None = None) -> str:
    """What the chart shows, in the user's own setting: "top_p = 0.9 at T = 0.7: 12 tokens survive",
    or "top_p = off" when top_p is 1 or the strategy does not sample. `survivors`: the run's own
    count at this step (the step table's "tokens left"), which the title quotes when known."""
    survive = cum.get("cut_rank") if survivors is None else survivors
    if strategy != "sample":
        return f"top_p = off ({strategy} search does not sample; the model's own curve, T = 1)"
    k = f", top_k = {cum['top_k']}" if cum.get("top_k") else ""
    if cum["top_p"] >= 1:
        return f"top_p = off at T = {cum['temperature']:g}{k}: {survive:,} tokens left"
    return f"top_p = {cum['top_p']:g} at T = {cum['temperature']:g}{k}: {survive:,} token(s) survive"


def cumulative_figure(dist: dict, strategy: str = "sample", survivors: int | None = None) -> go.Figure:
    """Cumulative probability of the sorted vocabulary (after top-k), with where top-p cuts it.

    `survivors` (the run's own count at this step) places the cut when given: the plot's
    separate forward pass can differ by a token at the boundary (int8). Lines are traces, not
    shapes: on a log axis plotly places annotations in log units.
    """
    cum = dist["cumulative"]
    ranks, ys = cum["ranks"], cum["cumulative"]
    fig = go.Figure()
    cut = (survivors or cum.get("cut_rank")) if strategy == "sample" and cum["top_p"] < 1 else None
    cut = min(cut, len(ranks)) if cut else cut
    if cut:
        fig.add_trace(go.Scatter(x=ranks[:cut], y=ys[:cut], fill="tozeroy", mode="none", fillcolor="rgba(44,160,44,0.25)",
                                 name=f"{cut:,} token(s) survive top-p", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=ranks, y=ys, mode="lines+markers" if len(ranks) <= 40 else "lines",
                             name="cumulative probability", line=dict(color="#1f77b4"),
                             hovertemplate="top %{x} tokens: %{y:.3f}<extra></extra>"))
    if cut:
        fig.add_trace(go.Scatter(x=[ranks[0], ranks[-1]], y=[cum["top_p"]] * 2, mode="lines",
                                 line=dict(color="#d62728", dash="dash"), name=f"top_p = {cum['top_p']:g}"))
        fig.add_trace(go.Scatter(x=[cut, cut], y=[0, 1], mode="lines", line=dict(color="#d62728", dash="dot"),
                                 name=f"cut after rank {cut:,}", hoverinfo="skip"))
    fig.update_xaxes(title=f"tokens sorted by probability (rank, log scale; vocabulary {dist['vocab_size']:,})",
                     type="log")
    fig.update_yaxes(title="cumulative probability", range=[0, 1.02])
    return notice(_layout(fig, cumulative_title(cum, strategy, survivors)), cumulative_notice(dist, cut))


def cumulative_notice(dist: dict, cut: int | None) -> str:
    """How steep the curve is at rank 10, and what the top-p cut keeps, from the figure's own points."""
    cum = dist["cumulative"]
    ranks, ys = cum["ranks"], cum["cumulative"]
    if not ranks:
        return ""
    i = max((j for j, r in enumerate(ranks) if r <= 10), default=0)
    steep = (f"the top {ranks[i]:,} token(s) of {dist['vocab_size']:,} already hold {ys[i]:.0%} of the "
             f"probability")
    if cut:
        return steep + f"; top-p keeps only the first {cut:,} and never samples the long tail after the cut."
    return steep + ": the long tail after them is many tokens with little probability each."


def place_labels(points: list[tuple[float, float, str]], width_px: float = 1200, height_px: float = 360,
                 char_px: float = 6.0, line_px: float = 13.0,
                 bounds: tuple[float, float, float, float] | None = None) -> list[bool]:
    """Which labels to draw so that none overlaps another: points (x, y, text) in data units,
    mapped onto a plot area of `width_px` x `height_px` spanning `bounds` (x0, x1, y0, y1; default
    the points' own); earlier points win (put the best path first). A label sits centred above
    its point."""
    if not points:
        return []
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = bounds or (min(xs), max(xs), min(ys), max(ys))
    xr, yr = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    boxes: list[tuple[float, float, float, float]] = []
    shown = []
    for x, y, text in points:
        cx, cy = (x - x0) / xr * width_px, (y - y0) / yr * height_px
        half = len(text) * char_px / 2 + 2
        box = (cx - half, cx + half, cy, cy + line_px)
        free = all(box[1] <= b[0] or box[0] >= b[1] or box[3] <= b[2] or box[2] >= b[3] for b in boxes)
        shown.append(free)
        if free:
            boxes.append(box)
    return shown


def tree_bounds(nodes: list[dict]) -> tuple[float, float, float, float]:
    """The beam tree's data extent (steps x cumulative log-prob): what its axes span."""
    xs, ys = [n["depth"] for n in nodes], [n["cum_logprob"] for n in nodes]
    return min(xs), max(xs), min(ys), max(ys)


def _label(token: str, n: int = 10) -> str:
    text = show_token(token)
    return text if len(text) <= n else text[: n - 1] + "…"


# The tree's token labels: a readable size (9 px drew about 7 px glyphs that overlapped), placed for the plot area
# a narrow screen leaves (a half-width plot on a laptop is about 600 x 330 px inside its axes), with the glyph
# box of that font: no two drawn labels touch.
TREE_FONT, TREE_CHAR_PX, TREE_LINE_PX, TREE_AREA = 12, 7.5, 16.0, (600, 330)


def beam_tree_figure(tree: dict | None) -> go.Figure:
    """The beam tree: x = step, y = cumulative log-prob; kept / ended / pruned hypotheses."""
    if not tree or len(tree.get("nodes", [])) <= 1:
        return empty_figure("Run beam search to see the beam tree.")
    nodes = tree["nodes"]
    by_id = {n["id"]: n for n in nodes}
    fig = go.Figure()
    for status in ("pruned", "eos", "kept"):
        xs, ys = [], []
        for n in nodes[1:]:
            if n["status"] != status:
                continue
            p = by_id[n["parent"]]
            xs += [p["depth"], n["depth"], None]
            ys += [p["cum_logprob"], n["cum_logprob"], None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                     line=dict(color=STATUS_COLORS[status], width=1 if status == "pruned" else 1.5)))
    best = sorted((n for n in nodes if n["best"]), key=lambda n: n["depth"])
    if len(best) > 1:
        fig.add_trace(go.Scatter(x=[n["depth"] for n in best], y=[n["cum_logprob"] for n in best], mode="lines",
                                 name="best output", line=dict(color="#ff7f0e", width=4), hoverinfo="skip"))
    names = {"kept": "kept (a running beam)", "eos": "ended (EOS)", "pruned": "pruned", "root": "prompt"}
    # Labels on the kept and ended hypotheses, best path first, none overlapping another.
    labelled = sorted((n for n in nodes[1:] if n["status"] in ("kept", "eos")), key=lambda n: not n["best"])
    shown = place_labels([(n["depth"], n["cum_logprob"], _label(n["token"])) for n in labelled], width_px=TREE_AREA[0],
                         height_px=TREE_AREA[1], char_px=TREE_CHAR_PX, line_px=TREE_LINE_PX, bounds=tree_bounds(nodes))
    text_of = {n["id"]: _label(n["token"]) for n, ok in zip(labelled, shown) if ok}
    for status in ("pruned", "eos", "kept", "root"):
        group = [n for n in nodes if n["status"] == status]
        if not group:
            continue
        fig.add_trace(go.Scatter(
            x=[n["depth"] for n in group], y=[n["cum_logprob"] for n in group],
            mode="markers+text" if status in ("kept", "eos") else "markers",
            text=[text_of.get(n["id"], "") for n in group], textposition="top center", textfont=dict(size=TREE_FONT),
            marker=dict(color=STATUS_COLORS[status], size=9 if status != "pruned" else 6,
                        line=dict(width=[2 if n["best"] else 0 for n in group], color="#ff7f0e")),
            name=names[status],
            customdata=[[show_token(n["token"]), n["logprob"], n["cum_logprob"], n["status"]] for n in group],
            hovertemplate="step %{x}: %{customdata[0]}<br>token log-prob %{customdata[1]:.3f}"
                          "<br>cumulative %{customdata[2]:.3f}<br>%{customdata[3]}<extra></extra>",
        ))
    title = "Beam tree: each step's running beams and their top candidates"
    if tree.get("truncated"):
        title += f" (first {tree['max_steps']} steps)"
    fig.update_xaxes(title="step (tokens generated)", dtick=1 if tree["steps"] <= 30 else None)
    fig.update_yaxes(title="cumulative log-probability")
    return notice(_layout(fig, title, height=460), beam_notice(nodes))


def beam_notice(nodes: list[dict]) -> str:
    """How many hypotheses the search weighed against the few it kept, and where the best one ends."""
    counts = {s: sum(1 for n in nodes[1:] if n["status"] == s) for s in ("kept", "eos", "pruned")}
    best = max((n for n in nodes if n["best"]), key=lambda n: n["depth"], default=None)
    said = (f"the search weighed {sum(counts.values())} hypotheses and pruned {counts['pruned']} of them; "
            "a path that is not the most likely at an early step can still end best.")
    if best is not None:
        said += f" The best output (orange) ends at step {best['depth']} with log-probability {best['cum_logprob']:.2f}."
    return said


def compare_figure(rows: list[dict]) -> go.Figure:
    """Compare mode at a glance: mean log-prob per token and distinct-2, per strategy."""
    names = [r["strategy"] for r in rows]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=[(r["sequence_logprob"] or 0) / max(r["n_new_tokens"], 1) for r in rows],
                         name="mean log-prob per token", marker_color="#1f77b4", offsetgroup="a"))
    fig.add_trace(go.Bar(x=names, y=[r["distinct_2"] for r in rows], name="distinct-2 (1 = no repetition)",
                         marker_color="#2ca02c", yaxis="y2", offsetgroup="b"))
    fig.update_layout(barmode="group", yaxis=dict(title="mean log-prob"),
                      yaxis2=dict(title="distinct-2", overlaying="y", side="right", range=[0, 1.05]))
    return notice(_layout(fig, "Strategies side by side"), compare_notice(rows))


def compare_notice(rows: list[dict]) -> str:
    """Which strategy the model finds most likely and which repeats itself least, from the bars."""
    if not rows:
        return ""
    mean = {r["strategy"]: (r["sequence_logprob"] or 0) / max(r["n_new_tokens"], 1) for r in rows}
    likely = max(mean, key=mean.get)
    varied = max(rows, key=lambda r: r["distinct_2"] or 0)
    return (f"'{likely}' has the highest mean log-prob per token ({mean[likely]:.2f}); "
            f"'{varied['strategy']}' repeats itself least (distinct-2 {varied['distinct_2'] or 0:.2f}). "
            "The most likely text is not always the most varied one.")


def growth_figure(data: dict | None) -> go.Figure:
    """Attention while generating: one row per generated token (what its step attended to), one
    column per token of the text; the prompt/generation boundary is a dashed line."""
    if not data or not data.get("rows"):
        return empty_figure("Show the attention to see each new token's row grow.")
    tokens, plen, rows = data["tokens"], data["prompt_len"], data["rows"]
    n_cols = plen + len(rows) - 1  # the last generated token is never attended to while generating
    z = [row[:n_cols] for row in rows]
    labels = [f"{i}:{_label(t, 8)}" for i, t in enumerate(tokens[:n_cols])]
    ys = [f"{i + 1}. {_label(tokens[plen + i], 10)}" for i in range(len(rows))]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(n_cols)), y=ys, colorscale="Blues", zmin=0, hoverongaps=False,
        colorbar=dict(title="weight"),
        hovertemplate="choosing %{y}<br>looked at %{customdata}<br>weight %{z:.4f}<extra></extra>",
        customdata=[labels] * len(rows),
    ))
    fig.add_vline(x=plen - 0.5, line_dash="dash", line_color="#dc2626")
    head = "mean over heads" if data["head"] == "mean" else f"head {data['head']}"
    _layout(fig, f"Attention while generating · layer {data['layer']}, {head} · row i: the step that chose token i",
            height=max(320, 60 + 22 * len(rows)))
    step = max(1, n_cols // 40)
    fig.update_xaxes(tickvals=list(range(0, n_cols, step)), ticktext=labels[::step], tickangle=-60)
    fig.update_yaxes(autorange="reversed", title="generated token")
    fig.update_layout(margin=dict(l=140, r=20, t=50, b=110))
    on_prompt = sum(rows[-1][:plen]) / (sum(rows[-1][:n_cols]) or 1)
    return notice(fig, f"each row is one step longer than the last: a token can look only at the tokens before it "
                       f"(the causal mask). The last step put {on_prompt:.0%} of its attention on the prompt "
                       f"(left of the dashed line).")
