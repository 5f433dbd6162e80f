"""Plotly figures for chapter 11 in the From scratch tab: the scaling law (loss against parameters
and against compute, log-log) and the cost of attention (time and memory against length; full,
sliding-window, block-sparse and linear patterns; their error per layer and head). Each figure's
"What to notice" line is computed from its data."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.shell import notice

COLOURS = ("#1f77b4", "#e07b14", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#17becf")
METHOD_COLOURS = {"full (by hand)": "#d62728", "fused kernel": "#9467bd", "sliding window": "#2ca02c", "linear": "#1f77b4"}


def _size(r: dict) -> str:
    return f"{r['layers']}x{r['width']}"


def scaling_figure(law: dict, added: dict | None = None) -> go.Figure:
    """Validation loss against non-embedding parameters, log-log: the family, the fitted line, its 95 %
    prediction band, Kaplan's slope for comparison, and an added size if any."""
    fit, band, runs = law["fit"], law["band"], law["runs"]
    fig = go.Figure()
    ns = [b["n"] for b in band]
    fig.add_trace(go.Scatter(x=ns + ns[::-1], y=[b["high"] for b in band] + [b["low"] for b in band][::-1],
                             fill="toself", fillcolor="rgba(31,119,180,0.15)", line=dict(width=0), hoverinfo="skip",
                             name="95 % prediction interval (one new run)"))
    fig.add_trace(go.Scatter(x=ns, y=[b["loss"] for b in band], mode="lines", line=dict(color=COLOURS[0]),
                             name=f"fit: {fit['model']}, alpha = {fit['alpha']:.3f}"))
    mid = runs[len(runs) // 2]
    k = law["kaplan_alpha"]
    fig.add_trace(go.Scatter(x=[ns[0], ns[-1]], y=[mid["val_loss"] * (mid["non_embedding"] / n) ** k for n in (ns[0], ns[-1])],
                             mode="lines", line=dict(color="#7f7f7f", dash="dot"),
                             name=f"Kaplan's slope, alpha = {k} (through the middle size)"))
    fig.add_trace(go.Scatter(x=[r["non_embedding"] for r in runs], y=[r["val_loss"] for r in runs],
                             mode="markers+text", marker=dict(size=10, color=COLOURS[1]), text=[_size(r) for r in runs],
                             textposition="top center", name="the family (layers x width)",
                             hovertemplate="N = %{x:,}<br>loss %{y:.4f}<extra>%{text}</extra>"))
    said = (f"the {len(runs)} sizes span {law['span']:g}x in parameters and the loss falls by "
            f"{runs[0]['val_loss'] - runs[-1]['val_loss']:.3f} nats; the fitted alpha {fit['alpha']:.3f} "
            f"(95 %: {fit['alpha_low']:.3f} to {fit['alpha_high']:.3f}) is "
            + ("inside" if fit["alpha_low"] <= k <= fit["alpha_high"] else
               "below" if fit["alpha_high"] < k else "above") + f" Kaplan's {k}")
    if added:
        r, p = added["run"], added["predicted"]
        fig.add_trace(go.Scatter(x=[r["non_embedding"]], y=[r["val_loss"]], mode="markers+text",
                                 marker=dict(size=13, symbol="star", color=COLOURS[4]), text=[f"yours {_size(r)}"],
                                 textposition="bottom center", name="the size you added"))
        said += (f"; your {_size(r)} landed at {r['val_loss']:.4f}, "
                 + ("inside" if added["inside"] else "outside")
                 + f" the predicted {p['low']:.4f} to {p['high']:.4f}")
    fig.update_xaxes(type="log", title="non-embedding parameters N (log)")
    fig.update_yaxes(type="log", title="validation loss, nats per byte (log)")
    fig.update_layout(title="Scaling law measured here: loss against size", height=420,
                      margin=dict(l=60, r=10, t=45, b=40), legend=dict(orientation="h", y=-0.25))
    return notice(fig, said + ".")


def compute_figure(law: dict) -> go.Figure:
    """Each size's validation loss as its training spends compute (C = 6 N D), log-log, and the
    frontier: the lowest loss any size had reached for that compute."""
    fig = go.Figure()
    for i, r in enumerate(law["runs"]):
        fig.add_trace(go.Scatter(x=[e["compute"] for e in r["evals"]], y=[e["val_loss"] for e in r["evals"]],
                                 mode="lines+markers", marker=dict(size=4), line=dict(color=COLOURS[i % len(COLOURS)]),
                                 name=f"{_size(r)} (N = {r['non_embedding']:,})"))
    front = law["frontier"]
    fig.add_trace(go.Scatter(x=[p["compute"] for p in front], y=[p["val_loss"] for p in front], mode="lines",
                             line=dict(color="black", dash="dash", width=2), name="frontier: best loss for the compute"))
    owners = []
    for p in front:
        name = next(_size(r) for r in law["runs"] if r["non_embedding"] == p["non_embedding"])
        if not owners or owners[-1] != name:
            owners.append(name)
    fig.update_xaxes(type="log", title="compute spent, C = 6 N D (floating-point operations, log)")
    fig.update_yaxes(type="log", title="validation loss (log)")
    fig.update_layout(title="Loss against compute: every size's training curve", height=420,
                      margin=dict(l=60, r=10, t=45, b=40), legend=dict(orientation="h", y=-0.25))
    return notice(fig, "the frontier passes from size to size as compute grows (" + " → ".join(owners)
                  + "): for a small budget a small model is best, for a larger one a larger model.")


def cost_figure(data: dict, key: str) -> go.Figure:
    """Time (key 'seconds') or peak memory ('peak_mb') against length, log-log, per method."""
    rows, fig = data["rows"], go.Figure()
    for method, colour in METHOD_COLOURS.items():
        mine = [r for r in rows if r["method"] == method and (r.get(key) or 0) > 0]  # a log axis has no 0 (the
        # table says 0.0 MB where a call's memory came from pages the process already held)
        fig.add_trace(go.Scatter(x=[r["tokens"] for r in mine],
                                 y=[r[key] * (1000 if key == "seconds" else 1) for r in mine],
                                 mode="lines+markers", name=method, line=dict(color=colour)))
    if key == "seconds":
        fit = data["fits"]["full (by hand)"]
        ts = data["lengths"]
        held = fit.get("holds") or [True] * len(ts)
        errs = fit.get("errors") or [0.0] * len(ts)
        # drawn only where it holds (a gap where it misses a point by more than its tolerance), error on hover
        fig.add_trace(go.Scatter(x=ts, y=[1000 * (fit["a"] + fit["b"] * t + fit["c"] * t * t) if ok else None
                                          for t, ok in zip(ts, held)],
                                 customdata=[100 * e for e in errs], mode="lines+markers", connectgaps=False,
                                 marker=dict(symbol="x", size=6), line=dict(color="#d62728", dash="dot"),
                                 hovertemplate="%{x} tokens: fit %{y:.3f} ms, %{customdata:+.0f}% off the point"
                                               "<extra></extra>",
                                 name="full: a + b T + c T² fitted (only where within "
                                      f"{100 * fit.get('tolerance', 0.25):.0f}%)"))
        said = time_notice(data)
        title, ytitle = "Time of one attention layer against the text's length", "milliseconds (log)"
    else:
        biggest = max((r for r in rows if r["method"] == "full (by hand)"), key=lambda r: r["tokens"])
        fused = next(r for r in rows if r["method"] == "fused kernel" and r["tokens"] == biggest["tokens"])
        said = (f"at {biggest['tokens']:,} tokens full attention written out peaked at {biggest['peak_mb']:,.0f} MB "
                f"(its weights alone are {biggest['weights_mb']:,.0f} MB) and the fused kernel at "
                f"{fused['peak_mb'] or 0:,.1f} MB: same numbers, no T x T matrix kept")
        title, ytitle = "Peak memory of one attention layer against the text's length", "MB above the start (log)"
    fig.update_xaxes(type="log", title="tokens T (log)")
    fig.update_yaxes(type="log", title=ytitle)
    fig.update_layout(title=title, height=380, margin=dict(l=60, r=10, t=45, b=40), legend=dict(orientation="h", y=-0.3))
    return notice(fig, said + ".")


PATTERNS = (("full", "full attention"), ("sliding window", "sliding window"), ("block-sparse", "block-sparse (BigBird)"),
            ("linear", "linear (elu + 1)"))


def patterns_figure(data: dict) -> go.Figure:
    """The chosen head's weights four ways, side by side (rows: queries, columns: keys)."""
    pats = data["patterns"]
    fig = make_subplots(rows=1, cols=4, subplot_titles=[t for _, t in PATTERNS], horizontal_spacing=0.03)
    for i, (key, _) in enumerate(PATTERNS):
        fig.add_trace(go.Heatmap(z=pats[key], colorscale="Blues", zmin=0, showscale=False,
                                 hovertemplate="query %{y}, key %{x}: %{z:.3f}<extra></extra>"), row=1, col=i + 1)
        fig.update_yaxes(autorange="reversed", showticklabels=i == 0, row=1, col=i + 1)
    share = {r["method"]: r["share"] for r in data["cost"]}
    fig.update_layout(title=f"Layer {data['layer']}, head {data['head']}: which keys each query sees "
                            f"({data['num_tokens']} tokens)", height=340, margin=dict(l=40, r=10, t=70, b=30))
    errs = {k: data["errors"][k][data["layer"]][data["head"]] for k in ("sliding window", "block-sparse", "linear")}
    kept = {k: data["weight_kept"][k][data["layer"]][data["head"]] for k in ("sliding window", "block-sparse")}
    return notice(fig, f"the window scores {share['sliding window']:.0%} of the pairs and keeps {kept['sliding window']:.0%} "
                       f"of this head's attention weight, the block-sparse pattern {share['block-sparse']:.0%} and "
                       f"{kept['block-sparse']:.0%}; their outputs are {errs['sliding window']:.0%} and "
                       f"{errs['block-sparse']:.0%} away from full attention's, linear attention's "
                       f"{errs['linear']:.0%} (it scores no pairs at all).")


def errors_figure(data: dict) -> go.Figure:
    """Each variant's relative error against full attention, per layer (rows) and head (columns)."""
    names = ("sliding window", "block-sparse", "linear")
    top = max(max(max(row) for row in data["errors"][n]) for n in names) or 1.0
    fig = make_subplots(rows=1, cols=3, subplot_titles=names, horizontal_spacing=0.05)
    for i, name in enumerate(names):
        fig.add_trace(go.Heatmap(z=data["errors"][name], colorscale="Reds", zmin=0, zmax=top, showscale=i == 2,
                                 hovertemplate="layer %{y}, head %{x}: %{z:.1%}<extra></extra>"), row=1, col=i + 1)
        fig.update_yaxes(autorange="reversed", title="layer" if i == 0 else None, row=1, col=i + 1)
        fig.update_xaxes(title="head", row=1, col=i + 1)
    fig.update_layout(title="Relative error against full attention's output, per layer and head",
                      height=max(300, 60 + 14 * data["num_layers"]), margin=dict(l=50, r=10, t=70, b=40))
    mean = data["mean_error"]
    worst = max(names, key=lambda n: mean[n])
    best = min(names, key=lambda n: mean[n])
    grid = data["errors"][best]
    hard = max(((li, h) for li in range(len(grid)) for h in range(len(grid[li]))), key=lambda lh: grid[lh[0]][lh[1]])
    said = (f"averaged over every head, {best} stays closest to full attention ({mean[best]:.1%}) and "
            f"{worst} is furthest ({mean[worst]:.1%}); {best}'s worst head is layer {hard[0]}, head "
            f"{hard[1]} ({grid[hard[0]][hard[1]]:.1%})")
    if best in data.get("weight_kept", {}):
        said += (f", where its pattern keeps only {data['weight_kept'][best][hard[0]][hard[1]]:.0%} of the head's "
                 "attention weight")
    return notice(fig, said + ".")


def share_text(x: float) -> str:
    """A share at the precision it needs: 20%, 3.4%, 0.27% (never a "0%" that is not zero)."""
    return f"{x:.0%}" if x >= 0.1 else f"{100 * x:.2g}%"


NAMED = {"fused kernel": "The fused kernel", "sliding window": "The sliding window", "linear": "Linear attention"}
WHY_SLOWER = {
    "fused kernel": "one call of torch's fused kernel has fixed costs (checks, picking a kernel, its tiled loop) that "
                    "two small matrix products do not pay; they matter only while T x T is small",
    "sliding window": "it loops over blocks of queries in Python, a fixed cost per block, and each block also "
                      "scores keys outside the band; that outweighs the T x T work it saves while the text is short",
    "linear": "its feature maps and per-head d x d sums cost T x d² whatever the length, more than full attention's "
              "T² x d while T is near the head size d",
}


IRREGULAR_R2 = 0.9  # below it on log time, no smooth growth describes the timings: the run is said to be irregular


def fit_text(data: dict) -> str:
    """How the fitted curve holds where it is drawn (log-log): R² of log time, the error at each length."""
    fit = data["fits"]["full (by hand)"]
    errs = fit.get("errors")
    if not errs:
        return f"R² {fit['r2']:.3f}"
    each = ", ".join(f"{t:,}: {100 * e:+.0f}%" for t, e in zip(data["lengths"], errs))
    missed = [f"{t:,}" for t, ok in zip(data["lengths"], fit["holds"]) if not ok]
    said = f"R² {fit['r2']:.3f} on the log-log scale it is drawn on; its error at each length: {each}"
    if missed:
        said += (f"; it misses {', '.join(missed)} tokens by more than {100 * fit['tolerance']:.0f}%, so it is not "
                 "drawn there")
    if fit["r2"] < IRREGULAR_R2:
        said += (f" (an R² under {IRREGULAR_R2} on log time: the timings themselves are irregular, as on a busy CPU; "
                 "measure again)")
    return said


def time_notice(data: dict) -> str:
    """The time figure's line: growth, what each cheaper method took at the longest length (at the precision
    it needs), how the fit holds, and why a method is slower than full attention where it is."""
    rows, ts = data["rows"], data["lengths"]
    fit = data["fits"]["full (by hand)"]
    last = {r["method"]: r for r in rows if r["tokens"] == ts[-1]}
    full_s = last["full (by hand)"]["seconds"]
    slope = fit["loglog_slope_last"]
    said = (f"doubling the text from {ts[-2]:,} to {ts[-1]:,} tokens multiplied full attention's time by "
            f"{2 ** slope:.1f} (4 would be purely quadratic)")
    if slope > 2.3:
        said += (f", faster than T² alone: at {ts[-1]:,} tokens its T x T weights ({last['full (by hand)']['weights_mb']:,.0f}"
                 " MB) outgrow the CPU's caches, so moving them adds to the arithmetic")
    said += (f"; at {ts[-1]:,} tokens the fused kernel took {share_text(last['fused kernel']['seconds'] / full_s)}, the "
             f"sliding window {share_text(last['sliding window']['seconds'] / full_s)} and linear attention "
             f"{share_text(last['linear']['seconds'] / full_s)} of full attention's time. The fit: {fit_text(data)}")
    for method, s in (data.get("slower_than_full") or {}).items():
        where = ", ".join(f"{t:,}" for t in s["tokens"])
        t0 = s["tokens"][0]
        said += f". {NAMED[method]} is slower than full attention at {where} tokens ({s['ratios'][0]:.1f}x its time at {t0:,})"
        if s.get("faster_from"):
            said += f": {WHY_SLOWER[method]}; it is faster from {s['faster_from']:,} tokens"
        else:  # slower up to the longest length: fixed costs cannot be the whole story there
            said += (f", the longest length included, where its saving should show: each time is the fastest of "
                     f"{data.get('repeats', 3)} or more calls on one run of a shared CPU, and a busy moment can "
                     "outweigh the method; measure again before reading it as the method's cost")
    return said


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f}" if seconds < 10 else f"{seconds * 1000:,.0f}"

