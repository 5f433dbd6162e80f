"""The NER task's figures and tables, from the backend's plain result: each says which split it
is on, how many steps ran and on which model (so a screenshot is true on its own)."""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from components.shell import notice

METRIC_COLOURS = {"precision": "#1f77b4", "recall": "#2ca02c", "f1": "#e07b14"}
SCORE_HEADERS = ["entity type", "precision", "recall", "F1", "gold entities", "predicted"]
TAG_COLOURS = {"PER": "#f4c7c3", "ORG": "#c9daf8", "LOC": "#d9ead3", "MISC": "#fff2cc"}


def _provenance(r: dict) -> str:
    return f"{r['steps']} steps, {r['train_sentences']} training sentences, {r['model']['checkpoint']}"


def score_rows(r: dict) -> list[list]:
    """seqeval's table: one row per entity type, then the micro-averaged overall row."""
    t = r["test"]
    rows = [[name, f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['f1']:.3f}", s["support"], s["predicted"]]
            for name, s in t["per_type"].items()]
    o = t["overall"]
    return rows + [["overall (micro)", f"{o['precision']:.3f}", f"{o['recall']:.3f}", f"{o['f1']:.3f}",
                    o["support"], o["predicted"]]]


def scores_figure(r: dict) -> go.Figure:
    """Precision, recall and F1 per entity type and overall, as grouped bars (test split)."""
    t = r["test"]
    names = list(t["per_type"]) + ["overall"]
    vals = [t["per_type"][n] for n in names[:-1]] + [t["overall"]]
    fig = go.Figure()
    for metric, colour in METRIC_COLOURS.items():
        fig.add_trace(go.Bar(x=names, y=[v[metric] for v in vals], name=metric, marker_color=colour,
                             text=[f"{v[metric]:.2f}" for v in vals], textposition="outside",
                             hovertemplate="%{x}: " + metric + " %{y:.3f}<extra></extra>"))
    fig.update_layout(barmode="group", height=360, yaxis_range=[0, 1.12], yaxis_title="entity-level score",
                      title=dict(text=f"seqeval scores per entity type (test split, {len(r['predictions']['test'])} "
                                      f"sentences)<br><sub>{html.escape(_provenance(r))}</sub>", font=dict(size=15)),
                      margin=dict(l=50, r=10, t=70, b=40), legend=dict(orientation="h", y=-0.15))
    if not t["per_type"]:
        return fig
    best = max(t["per_type"], key=lambda n: t["per_type"][n]["f1"])
    worst = min(t["per_type"], key=lambda n: t["per_type"][n]["f1"])
    return notice(fig, f"{best} is found best (F1 {t['per_type'][best]['f1']:.2f}) and {worst} worst "
                       f"(F1 {t['per_type'][worst]['f1']:.2f}); overall F1 {t['overall']['f1']:.2f}. An entity counts "
                       "only when its whole span and type are right.")


def confusion_figure(r: dict) -> go.Figure:
    """Word-level tag confusion (rows gold, columns predicted), coloured by the row's fraction,
    labelled with the counts."""
    c = r["confusion"]
    fig = go.Figure(go.Heatmap(
        z=c["normalised"], x=c["labels"], y=c["labels"], zmin=0, zmax=1, colorscale="Blues",
        text=[[str(v) for v in row] for row in c["counts"]], texttemplate="%{text}",
        hovertemplate="gold %{y}<br>predicted %{x}<br>%{text} words (%{z:.0%} of the row)<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text="gold tag")
    fig.update_xaxes(title_text="predicted tag")
    fig.update_layout(title=dict(text=f"Confusion of word tags ({c['split']} split, {c['words']} words; colour = "
                                      f"share of the gold row)<br><sub>{html.escape(_provenance(r))}</sub>",
                                 font=dict(size=15)),
                      height=460, margin=dict(l=70, r=10, t=80, b=50))
    errors = [(v, c["labels"][i], c["labels"][j]) for i, row in enumerate(c["counts"])
              for j, v in enumerate(row) if i != j and v > 0]
    if not errors:
        return notice(fig, "every word's tag is right: all counts sit on the diagonal.")
    v, gold, predicted = max(errors)
    return notice(fig, f"the most common mistake: {v} word(s) tagged '{gold}' predicted as '{predicted}'. "
                       "Off-diagonal cells are the errors; their row says what the word really was.")


def loss_figure(r: dict) -> go.Figure:
    """Training loss per step, and the validation entity F1 after each epoch (the best one kept)."""
    fig = go.Figure()
    losses = r["losses"]
    fig.add_trace(go.Scatter(x=list(range(1, len(losses) + 1)), y=losses, mode="lines", name="training loss",
                             line=dict(color="#e07b14")))
    evals = r.get("evals") or []
    if evals:
        fig.add_trace(go.Scatter(x=[e["step"] for e in evals], y=[e["f1"] for e in evals], mode="markers+lines",
                                 name="validation F1", yaxis="y2", marker=dict(size=9, color="#1f77b4")))
    fig.update_layout(title=dict(text=f"Fine-tuning: {r['steps']} steps ({r['epochs']} epoch"
                                      f"{'' if r['epochs'] == 1 else 's'}), best at step {r['best_step']}",
                                 font=dict(size=15)),
                      height=320, margin=dict(l=50, r=50, t=50, b=40), xaxis_title="step",
                      yaxis=dict(title="cross-entropy"),
                      yaxis2=dict(title="validation F1", overlaying="y", side="right", range=[0, 1]),
                      legend=dict(orientation="h", y=-0.25))
    fig.update_xaxes(dtick=max(1, math.ceil(len(losses) / 10)))
    return fig


def _cell(tag: str, wrong: bool) -> str:
    kind = tag[2:] if tag != "O" else ""
    bg = TAG_COLOURS.get(kind, "#eeeeee") if kind else "transparent"
    border = "2px solid #d62728" if wrong else "2px solid transparent"
    return (f"<span style='background:{bg};border:{border};border-radius:3px;padding:0 3px;white-space:nowrap;"
            f"font-size:0.85em'>{html.escape(tag)}</span>")


def _word(w: str, g: str, p: str, wrong: bool) -> str:
    """One word as a small column: the word, its gold tag, its predicted tag."""
    return (f"<div style='display:inline-flex;flex-direction:column;align-items:center;gap:1px'>"
            f"<span style='font-weight:{'bold' if wrong else 'normal'};white-space:nowrap'>{html.escape(w)}</span>"
            f"{_cell(g, wrong)}{_cell(p, wrong)}</div>")


def errors_html(r: dict) -> str:
    """The book's error analysis: the highest-loss sentences, each word with its gold tag (middle)
    and predicted tag (bottom); the words where they differ are framed in red."""
    e = r["errors"]
    parts = [f"<div id='train-ner-errors-list'><p><b>The {len(e['rows'])} {e['split']} sentences (of {e['of']}) "
             f"with the highest loss</b> under the best epoch ({r['steps']} steps). Under each word: its gold tag, "
             "then the predicted one; where they differ both are "
             "<span style='border:2px solid #d62728;padding:0 3px'>framed</span>.</p>"]
    for row in e["rows"]:
        words = "".join(_word(w, g, p, d) for w, g, p, d in zip(row["tokens"], row["gold"], row["pred"], row["differs"]))
        parts.append(f"<div class='ner-error' style='margin:8px 0;padding-top:4px;border-top:1px solid #ddd'>"
                     f"<small>loss {row['loss']:.3f}, {row['wrong_words']} wrong "
                     f"word{'' if row['wrong_words'] == 1 else 's'} of {len(row['tokens'])}</small>"
                     f"<div style='display:flex;flex-wrap:wrap;gap:4px 8px;align-items:flex-start'>{words}</div></div>")
    return "".join(parts) + "</div>"


def entities_html(p: dict) -> str:
    """A tagged sentence: its entities highlighted in place, with type and score."""
    text, out, at = p["text"], [], 0
    for e in p["entities"]:
        out.append(html.escape(text[at:e["start"]]))
        colour = TAG_COLOURS.get(e["entity_group"], "#eeeeee")
        out.append(f"<mark style='background:{colour};padding:1px 3px;border-radius:3px'>{html.escape(e['word'])} "
                   f"<small><b>{html.escape(e['entity_group'])}</b> {e['score']:.2f}</small></mark>")
        at = e["end"]
    out.append(html.escape(text[at:]))
    m = p["model"]
    f1 = m.get("test_f1")
    note = (f"by your NER model ({m['steps']} steps over {m['base_checkpoint']}, trained on {m['trained_on']}; "
            f"test F1 {f1:.3f} on {m['test_n']} sentences)" if f1 is not None else "by your NER model")
    found = "" if p["entities"] else "<p><i>No entity found.</i></p>"
    return (f"<div id='train-ner-tagged'><p style='line-height:2'>{''.join(out)}</p>{found}"
            f"<small><i>{html.escape(note)}</i></small></div>")
