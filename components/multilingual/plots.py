"""The transfer plot: entity F1 per test language, one bar per training run, with a "What to notice"
line read off its own data."""

from __future__ import annotations

import plotly.graph_objects as go

from components.shell import notice
from components.shell.figures import legend_below

RUN_COLORS = {"de": "#1f77b4", "all": "#ff7f0e", "yours": "#2ca02c"}


def transfer_notice(r: dict) -> str:
    """The German model's drop from German to each other language, and what training on all recovers."""
    rows = {row["run"]: row for row in r["table"]}
    langs = [l for l in r["languages"] if l != "de"]
    de, every = rows.get("de"), rows.get("all")
    if de is None and len(rows) == 1:
        return _one_run_notice(r, next(iter(rows.values())))
    if de is None or not langs:
        return ""
    worst = min(langs, key=lambda l: de[l])
    said = (f"Trained on German only, entity F1 is {de['de']:.2f} on German and {de[worst]:.2f} on "
            f"{r['languages'][worst]}, its lowest zero-shot language")
    if every is not None:
        gain = every[worst] - de[worst]
        said += (f"; training on all four languages moves {r['languages'][worst]} to {every[worst]:.2f} "
                 f"({'+' if gain >= 0 else ''}{gain:.2f})")
    return said + "."


def _one_run_notice(r: dict, row: dict) -> str:
    """A single run (a learner's own): its best and worst test language, and whether a language it never saw
    scored below the ones it trained on."""
    names, trained = r["languages"], row.get("train_languages") or []
    best = max(names, key=lambda l: row[l])
    worst = min(names, key=lambda l: row[l])
    if f"{row[best]:.2f}" == f"{row[worst]:.2f}":
        return f"Your run scores the same entity F1 on every test language ({row[best]:.2f})."
    said = (f"Your run scores highest on {names[best]} ({row[best]:.2f}) and lowest on {names[worst]} "
            f"({row[worst]:.2f})")
    unseen = [l for l in names if l not in trained]
    if unseen and trained:
        seen_mean = sum(row[l] for l in trained) / len(trained)
        unseen_mean = sum(row[l] for l in unseen) / len(unseen)
        said += (f"; on the languages it never saw (zero-shot) {unseen_mean:.2f} on average against {seen_mean:.2f} "
                 "on the ones it trained on")
    return said + "."


def transfer_bars(r: dict) -> go.Figure:
    fig = go.Figure()
    langs = list(r["languages"])
    for row in r["table"]:
        fig.add_trace(go.Bar(x=[r["languages"][l] for l in langs], y=[row[l] for l in langs], name=row["trained_on"],
                             marker_color=RUN_COLORS.get(row["run"]), text=[f"{row[l]:.2f}" for l in langs],
                             textposition="outside", cliponaxis=False))
    fig.update_layout(title="Entity F1 by test language", barmode="group", height=380, template="plotly_white",
                      yaxis=dict(title="entity F1 (test)", range=[0, 1.05]), xaxis_title="test language",
                      margin=dict(l=60, r=20, t=60, b=20))
    legend_below(fig, "fine-tuned on")
    return notice(fig, transfer_notice(r))
