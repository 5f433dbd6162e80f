"""Plotly figures for the Train tab, built from the backend's plain dicts.

A figure of something that did not run is None (the tab hides its plot: no blank axes)."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from components.shell import notice, short

METHOD_LABELS = {"zero_shot": "zero-shot (similarity)", "probe": "features + logistic regression",
                 "finetune": "fine-tuning"}
# A confusion matrix's title over a third of the figure: short lines that fit it (the long label ran
# into its neighbour: "acc 0.67atures + logistic...").
SHORT_LABELS = {"zero_shot": "zero-shot<br>(similarity)", "probe": "features +<br>logistic regression",
                "finetune": "fine-tuning"}
METHOD_COLOURS = {"zero_shot": "#8c8c8c", "probe": "#1f77b4", "finetune": "#e07b14"}
SMALL_SAMPLE = 30  # below this many test examples an accuracy carries its count and interval
PALETTE = ["#1f77b4", "#e07b14", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def loss_figure(losses: list[float], epochs: list[dict] | None = None, total_steps: int | None = None) -> go.Figure:
    """Training loss per step, with the validation loss at each evaluation."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(range(1, len(losses) + 1)), y=losses, mode="lines",
                             name="training loss (per batch)", line=dict(color="#e07b14")))
    if epochs:
        fig.add_trace(go.Scatter(x=[e["step"] for e in epochs], y=[e["val_loss"] for e in epochs],
                                 mode="markers+lines", name="validation loss",
                                 marker=dict(size=9, color="#1f77b4"),
                                 text=[f"epoch {e['epoch']}: val acc {e['val_accuracy']:.3f}" for e in epochs],
                                 hovertemplate="%{text}<br>loss %{y:.3f}<extra></extra>"))
    fig.update_layout(title="Fine-tuning loss", height=320, margin=dict(l=50, r=10, t=45, b=40),
                      xaxis_title="step", yaxis_title="cross-entropy", legend=dict(orientation="h", y=-0.25))
    steps = total_steps or len(losses) or 1
    fig.update_xaxes(dtick=max(1, math.ceil(steps / 10)))  # whole steps, never 0.5
    if total_steps:
        fig.update_xaxes(range=[0, total_steps + 1])
    if not losses:
        return fig
    said = f"the training loss goes from {losses[0]:.2f} on the first batch to {losses[-1]:.2f} on the last"
    if epochs:
        said += f"; the validation loss ends at {epochs[-1]['val_loss']:.2f}"
        if len(epochs) > 1 and epochs[-1]["val_loss"] > min(e["val_loss"] for e in epochs):
            said += " (above its best: more epochs start to overfit)"
    return notice(fig, said + ". Single batches are noisy: read the trend, not one step.")


def confusion_figure(methods: dict, ranking: dict | None = None) -> go.Figure | None:
    """The normalised confusion matrix of each method, side by side (rows = true label)."""
    from plotly.subplots import make_subplots

    names = [m for m in ("zero_shot", "probe", "finetune") if m in methods and "confusion" in methods[m]]
    if not names:
        return None
    fig = make_subplots(rows=1, cols=len(names), horizontal_spacing=0.1,
                        subplot_titles=[f"{SHORT_LABELS[m]}<br>acc {_acc(methods[m])}" + _cut(methods[m]) for m in names])
    fig.update_annotations(font=dict(size=12))  # each title within its own third: never run into the next
    for i, m in enumerate(names, start=1):
        c = methods[m]["confusion"]
        z = c["normalised"]
        fig.add_trace(go.Heatmap(z=z, x=c["labels"], y=c["labels"], zmin=0, zmax=1, colorscale="Blues",
                                 showscale=i == len(names), text=[[f"{v:.2f}" for v in row] for row in z],
                                 texttemplate="%{text}", hovertemplate="true %{y}<br>predicted %{x}<br>%{z:.2f}<extra></extra>"),
                      row=1, col=i)
        fig.update_yaxes(autorange="reversed", row=1, col=i, title_text="true" if i == 1 else None)
        fig.update_xaxes(title_text="predicted", row=1, col=i)
    two_lines = any(methods[m].get("n") is not None and methods[m]["n"] < SMALL_SAMPLE for m in names)
    fig.update_layout(title=dict(text="Normalised confusion matrices (test split)", y=0.92 if two_lines else 0.95, yanchor="top"),
                      height=450 if two_lines else 400, margin=dict(l=60, r=10, t=150 if two_lines else 95, b=50))
    return notice(fig, confusion_notice(methods, names, ranking))


def _cut(m: dict) -> str:
    """A title's mark for a run the time budget cut short (backend.train.ranking.is_cut)."""
    if m.get("stopped") == "time budget" and m.get("steps", 0) < m.get("total_steps", 0):
        return f"<br>cut at {m['steps']}/{m['total_steps']} steps"
    return ""


def confusion_notice(methods: dict, names: list[str], ranking: dict | None = None) -> str:
    """What the run's ranking (backend.train.ranking.rank) allows: the method claimed most accurate, or why
    none is named, a run cut short by the budget said to be cut and not ranked; the accuracies; then the most
    common mistake (the darkest cell off the diagonal) of the best or, unclaimed, of the top complete method."""
    if ranking is None:  # a single method: nothing to rank
        ranking = {"best": names[0] if len(names) == 1 else None, "cut": [],
                   "order": sorted(names, key=lambda m: -methods[m]["accuracy"]),
                   "text": "" if len(names) == 1 else "no method is named the most accurate: no ranking was made"}
    accs = ", ".join(f"{METHOD_LABELS[m]} {methods[m]['accuracy']:.2f}" + (" [cut short]" if m in ranking["cut"] else "")
                     for m in names)
    best = ranking["best"]
    said = f"{ranking['text'][:1].upper()}{ranking['text'][1:]} (test accuracy: {accs})" if ranking["text"] else \
        f"{METHOD_LABELS[best]}: test accuracy {accs}"
    top = best or next((m for m in ranking["order"] if m in names), names[0])
    c = methods[top]["confusion"]
    errors = [(v, c["labels"][i], c["labels"][j]) for i, row in enumerate(c["normalised"])
              for j, v in enumerate(row) if i != j and v > 0]
    if errors:
        v, true, predicted = max(errors)
        said += (f". The most common mistake of {METHOD_LABELS[top]}: {v:.0%} of the '{true}' examples predicted as "
                 f"'{predicted}'")
    else:
        said += f". {METHOD_LABELS[top]} makes no mistake on the test split: everything sits on the diagonal"
    return said + "."


def _acc(r: dict) -> str:
    """An accuracy on a figure: on fewer than 30 examples with its count and 95% interval."""
    text = f"{r['accuracy']:.2f}"
    if r.get("n") is not None and r["n"] < SMALL_SAMPLE:
        ci = r.get("ci95")
        text += f"<br>(n={r['n']}" + (f", 95% CI {ci[0]:.2f}-{ci[1]:.2f}" if ci else "") + ")"
    return text


def map_figure(m: dict | None) -> go.Figure | None:
    """Hidden states in 2-D (PCA), one colour per label."""
    if not m:
        return None
    fig = go.Figure()
    present = set(m["labels"])
    names = m.get("label_names") or sorted(present)  # one colour per label in every map of a run
    for i, label in enumerate(names):
        if label not in present:
            continue
        idx = [j for j, l in enumerate(m["labels"]) if l == label]
        fig.add_trace(go.Scattergl(x=[m["x"][j] for j in idx], y=[m["y"][j] for j in idx], mode="markers",
                                   name=label, marker=dict(size=6, color=PALETTE[i % len(PALETTE)], opacity=0.75),
                                   text=[short(m["texts"][j], 80) for j in idx],
                                   hovertemplate="%{text}<extra>" + label + "</extra>"))
    ev = m.get("explained_variance", [0, 0])
    of = m["of"].replace(" (", "<br>(", 1)  # two lines: the title fits a half-width plot
    fig.update_layout(title=dict(text=f"{m['method']} of {of}", font=dict(size=14)), height=420, margin=dict(l=40, r=10, t=70, b=40),
                      xaxis_title=f"PC1 ({ev[0]:.0%} of variance)", yaxis_title=f"PC2 ({ev[1]:.0%})")
    share = nearest_centre_share(m["x"], m["y"], m["labels"])
    if share is None:
        return fig
    return notice(fig, f"in these two dimensions alone, {share:.0%} of the points lie nearer their own label's "
                       f"centre than any other's; the closer that is to 100%, the easier a linear classifier's job.")


def nearest_centre_share(xs: list[float], ys: list[float], labels: list[str]) -> float | None:
    """Share of points nearer the mean of their own label than of any other (None: one label)."""
    groups: dict = {}
    for x, y, l in zip(xs, ys, labels):
        groups.setdefault(l, []).append((x, y))
    if len(groups) < 2:
        return None
    centres = {l: (sum(p[0] for p in ps) / len(ps), sum(p[1] for p in ps) / len(ps)) for l, ps in groups.items()}
    right = sum(1 for x, y, l in zip(xs, ys, labels)
                if min(centres, key=lambda c: (x - centres[c][0]) ** 2 + (y - centres[c][1]) ** 2) == l)
    return right / len(labels)


def curve_figure(curve: dict | None) -> go.Figure | None:
    """Test accuracy against training examples per label, one line per method (chapter 9)."""
    if not curve:
        return None
    fig = go.Figure()
    ticks = [str(s) for s in curve["sizes"]]
    for m in ("zero_shot", "probe", "finetune"):
        if m in curve:
            fig.add_trace(go.Scatter(x=ticks, y=curve[m], mode="lines+markers", name=METHOD_LABELS[m],
                                     line=dict(color=METHOD_COLOURS[m], dash="dash" if m == "zero_shot" else None),
                                     customdata=curve["examples"],
                                     hovertemplate="%{x} per label (%{customdata} examples)<br>accuracy %{y:.3f}<extra></extra>"))
    n = curve.get("test_n")
    title = "Learning curve: test accuracy vs training examples per label"
    if n is not None and n < SMALL_SAMPLE:
        title += f"<br><sub>on only {n} test examples: one example moves accuracy by {1 / n:.2f}</sub>"
    fig.update_layout(title=title, height=360,
                      margin=dict(l=50, r=10, t=50, b=40), xaxis_title="examples per label",
                      yaxis_title="test accuracy", yaxis_range=[0, 1.02], legend=dict(orientation="h", y=-0.25))
    # A point can be empty (None): a run stopped by its budget or the Stop button before that point's
    # fine-tuning. Plotly leaves a gap there; the line below reads only the measured points and says
    # how many are missing.
    said = []
    for m in ("finetune", "probe"):
        points = [(t, y) for t, y in zip(ticks, curve.get(m) or []) if y is not None]
        missing = len(curve.get(m) or []) - len(points)
        if len(points) >= 2:
            said.append(f"{METHOD_LABELS[m]} goes from {points[0][1]:.2f} with {points[0][0]} to {points[-1][1]:.2f} "
                        f"with {points[-1][0]} examples per label")
        elif len(points) == 1:
            said.append(f"{METHOD_LABELS[m]} measured one point: {points[0][1]:.2f} with {points[0][0]} per label")
        if missing and curve.get(m):
            said.append(f"{missing} {METHOD_LABELS[m]} point{'s' if missing > 1 else ''} not measured (the run "
                        "stopped first)")
    if not said or len(ticks) < 2:
        return fig
    zero = [y for y in curve.get("zero_shot") or [] if y is not None]
    if zero:
        said.append(f"zero-shot needs no examples and stays at {zero[-1]:.2f}")
    return notice(fig, "; ".join(said) + ".")
