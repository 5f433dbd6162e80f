"""Chapter 7's evaluation in the Semantic search tab: how often the retriever finds the passage that
holds the answer, how well the reader trained here reads that passage, and how the two do together.

The numbers come from backend.search.evaluate_reader (the glossary corpus and its 36 questions);
this module only formats them: a summary with every term defined, a plot, a table of every question.
"""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from backend.search.contracts import CONTRACTS
from backend import search
from components.shell.figures import legend_below
from components.shell import LONG_LANE, error_box, md_text, model_badge, notice, raw_json
from components.shell.endpoint import Endpoint, declare

TERMS = ("*recall@k*: the share of questions whose gold passage (the one the answer was written from) is "
         "among the k passages closest to the question. *Exact match (EM)*: the answer equals one of the "
         "reference answers after SQuAD's normalisation (lower case; punctuation and a, an, the removed). "
         "*F1*: the overlap of the answer's and the reference's words (harmonic mean of precision and "
         "recall over words), the best over the references; both in %.")


def _pct(x: float) -> str:
    return f"{x:.1f}%"


def evaluation_figure(out: dict) -> go.Figure:
    """Recall@k of the retriever and the end-to-end EM/F1 against k, with the reader's ceiling
    (F1 on the gold passage) as a line."""
    recall, e2e, gold = out["recall"], out["end_to_end"], out["reader_on_gold"]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[r["k"] for r in recall], y=[100 * r["recall"] for r in recall],
                             mode="lines+markers", name="retriever: recall@k",
                             hovertemplate="recall@%{x}: %{y:.1f}%<extra></extra>"))
    for key, name, dash in (("f1", "end to end: F1", "solid"), ("exact", "end to end: exact match", "dash")):
        fig.add_trace(go.Scatter(x=[r["k"] for r in e2e], y=[r[key] for r in e2e], mode="lines+markers",
                                 name=name, line=dict(dash=dash),
                                 hovertemplate=f"{name} over the top %{{x}}: %{{y:.1f}}%<extra></extra>"))
    fig.add_hline(y=gold["f1"], line_dash="dot", line_color="gray",
                  annotation_text=f"reader on the gold passage:<br>F1 {gold['f1']:.1f}%",  # one line outran a phone's plot
                  annotation_position="bottom right")
    ks = sorted({r["k"] for r in recall} | {r["k"] for r in e2e})
    fig.update_layout(title=f"Retriever and reader on {out['questions']} questions over {out['passages']} passages",
                      xaxis=dict(title="k: passages retrieved per question", type="log", tickvals=ks),
                      yaxis=dict(title="% of questions", range=[0, 105]), height=380, margin=dict(l=60, r=20, t=50, b=10))
    legend_below(fig)  # at a fixed place under the plot it ran into the title and the axis on a phone
    return notice(fig, evaluation_notice(out))


def evaluation_notice(out: dict) -> str:
    """What to notice, from this evaluation's own numbers."""
    recall, e2e, gold = out["recall"], out["end_to_end"], out["reader_on_gold"]
    first, last = recall[0], recall[-1]
    best = max(e2e, key=lambda r: r["f1"])
    line = (f"The retriever puts the gold passage first for {100 * first['recall']:.0f}% of the questions and "
            f"among the top {last['k']} for {100 * last['recall']:.0f}%. ")
    if best["f1"] < gold["f1"]:
        line += (f"Reading the top {best['k']} gives the best end-to-end F1, {best['f1']:.1f}%, below the "
                 f"{gold['f1']:.1f}% the reader scores when it is handed the gold passage: the gap is what "
                 "retrieval costs.")
    else:
        line += (f"Reading the top {best['k']} gives F1 {best['f1']:.1f}%, no worse than the reader on the gold "
                 f"passage alone ({gold['f1']:.1f}%): other passages held the answer too.")
    return line


def summary_markdown(out: dict) -> str:
    recall = ", ".join(f"@{r['k']} {100 * r['recall']:.0f}%" for r in out["recall"])
    gold = out["reader_on_gold"]
    e2e = "; ".join(f"top {r['k']}: EM {_pct(r['exact'])}, F1 {_pct(r['f1'])}" for r in out["end_to_end"])
    again = ("\n\n*Computed earlier in this app's process with the same models and questions; shown again.*"
             if out.get("cached") else "")
    return (f"**Retriever** recall {recall}.\n\n"
            f"**Reader on the gold passage** (its ceiling): EM {_pct(gold['exact'])}, F1 {_pct(gold['f1'])}.\n\n"
            f"**End to end** (retrieve k, read them all, keep the best span): {e2e}.\n\n"
            f"<small>{TERMS}</small>{again}")


def rows_markdown(out: dict) -> str:
    """Every question: what was expected, where the retriever ranked its gold passage, what the reader
    said on that passage and over the top k (a markdown table: it wraps at any width)."""
    ks = [out["end_to_end"][0]["k"], out["end_to_end"][-1]["k"]]  # the fewest and the most passages read
    head = ("| question | expected | rank of gold passage | reader on gold passage (F1 %) | "
            + " | ".join(f"end to end, top {k}" for k in ks) + " |\n|" + "---|" * (4 + len(ks)) + "\n")

    def said(answer: str) -> str:
        return md_text(answer) if answer else "*(no answer)*"

    body = "\n".join(
        f"| {md_text(r['question'])} | {md_text(r['expected'])} | "
        f"{r['rank_of_gold'] if r['rank_of_gold'] is not None else 'not in the top 20'} | "
        f"{said(r['on_gold'])} ({100 * r['on_gold_f1']:.0f}) | " + " | ".join(said(r.get(f"top{k}")) for k in ks) + " |"
        for r in out["rows"])
    return head + body


def evaluate(progress=gr.Progress()):
    out = search.evaluate_reader(progress=progress)
    badges = (f"Reader: {model_badge(out['reader_model'])}\n\n"
              f"Retriever: {model_badge(out['retriever_model'])}")
    return summary_markdown(out), evaluation_figure(out), rows_markdown(out), badges, out


def build_evaluation() -> None:
    """The accordion and its wiring (inside the tab's Blocks)."""
    with gr.Accordion("Evaluate the retriever and the reader (chapter 7)", open=False):
        gr.Markdown("Runs the book's evaluation on the built-in glossary and the questions written for it: "
                    "the retriever's recall@k, the reader trained here on the passage that holds each answer, "
                    "and the two together. About a minute on a quiet CPU; the numbers are kept for this app "
                    "once computed.")
        run = gr.Button("Evaluate", elem_id="search-evaluate")
        box = error_box(elem_id="search-evaluate-error")
        summary = gr.Markdown(elem_id="search-evaluate-summary")
        plot = gr.Plot(label="retriever and reader", elem_id="search-evaluate-plot")
        with gr.Accordion("Every question: what the reader said", open=False):
            table = gr.Markdown(elem_id="search-evaluate-table")
        badge = gr.Markdown(elem_id="search-evaluate-badge")
        out_json = raw_json("Evaluation (JSON: what /evaluate_reader returns)", elem_id="search-evaluate-json")
    outputs = [summary, plot, table, badge, out_json]
    declare(Endpoint("evaluate_reader", evaluate, {}, outputs, trigger=run, lane=LONG_LANE, errors=box, contract=CONTRACTS["evaluate_reader"]))
