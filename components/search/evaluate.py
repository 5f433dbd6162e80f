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


ADAPT_TERMS = ("*Before*: the reader trained here on the shipped general QA set. *After*: that reader fine-tuned on "
               "the glossary's own training questions, its no-answer threshold chosen on the validation questions "
               "({chosen_on}) (the book's order: a SQuAD reader, then questions from the target domain). *Interval*: a seeded "
               "percentile bootstrap over the test questions: they are drawn again with replacement {resamples:,} "
               "times, and the interval holds the middle {level:.0%} of the scores; the difference's interval "
               "resamples the same questions for both readers.")


def _ci(ci: list[float]) -> str:
    return f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _cell(s: dict, key: str) -> str:
    return f"{s[key]:.1f} {_ci(s[key + '_ci'])}"


def _diff(d: dict) -> str:
    return f"{d['points']:+.1f} {_ci(d['ci'])}"


def adaptation_notice(t: dict) -> str:
    """What to notice, from the stored table: did adaptation move EM by more than its interval, and what the
    retriever leaves the reader."""
    d = t["difference"]["on_gold"]["exact"]
    r = {x["name"]: x["on_gold"] for x in t["readers"]}
    if d["ci"][0] > 0:
        claim = (f"adaptation raised exact match on the question's own passage from {r['general']['exact']:.1f}% to "
                 f"{r['adapted']['exact']:.1f}%, and the difference's interval ({_diff(d)} points) lies above zero: "
                 "more than the resampling of these questions explains.")
    elif d["ci"][1] < 0:
        claim = f"adaptation lowered exact match ({_diff(d)} points), by more than its interval."
    else:
        claim = (f"exact match moved {_diff(d)} points, an interval that includes zero: on "
                 f"{t['questions']} questions this change cannot be told from chance.")
    e2e = {x["name"]: x["end_to_end"][-1] for x in t["readers"]}
    k = max((x for x in t["recall"] if x["k"] <= e2e["adapted"]["k"]), key=lambda x: x["k"])
    d_e2e = [x for x in t["difference"].get("end_to_end", []) if x["k"] == e2e["adapted"]["k"]]
    moved = f" (a difference of {_diff(d_e2e[0]['exact'])} points)" if d_e2e else ""
    return (f"What to notice: {claim} End to end, the retriever finds the answer's passage among its top {k['k']} for "
            f"{k['recall']:.1f}% of the answerable questions, so reading the top {e2e['adapted']['k']} scores "
            f"EM {e2e['general']['exact']:.1f}% before and {e2e['adapted']['exact']:.1f}% after{moved}.")


def _row(label: str, s: dict, lenient: bool) -> str:
    extra = (f" {_cell(s, 'lenient')} | {s['refused_unanswerable']} of {s['unanswerable']} |" if lenient else "")
    return f"| {label} | {_cell(s, 'exact')} | {_cell(s, 'f1')} |{extra}"


def adaptation_markdown(t: dict | None) -> str:
    """The chapter-7 table from the figures stored with the adapted reader (measured when it was built)."""
    if t is None:
        return ("*The reader adapted to the glossary is not built yet: `make build` (or `python -m backend.hub "
                "build`) trains it and measures this table once.*")
    r = {x["name"]: x for x in t["readers"]}
    lenient = "lenient" in r["adapted"]["on_gold"]  # tables built before the lenient rate have two columns
    d = t["difference"]["on_gold"]
    rows = [_row("reader on the question's own passage, before", r["general"]["on_gold"], lenient),
            _row("reader on the question's own passage, after", r["adapted"]["on_gold"], lenient),
            f"| difference, after - before (points) | {_diff(d['exact'])} | {_diff(d['f1'])} |"
            + (f" {_diff(d['lenient'])} | |" if lenient and "lenient" in d else (" | |" if lenient else ""))]
    for i, k in enumerate(x["k"] for x in r["general"]["end_to_end"]):
        g, a = r["general"]["end_to_end"][i], r["adapted"]["end_to_end"][i]
        top = f"top {k} passage{'s' if k != 1 else ''}"
        rows.append(_row(f"retriever-reader, {top}, before", g, lenient))
        rows.append(_row(f"retriever-reader, {top}, after", a, lenient))
    recall = "; ".join(f"recall@{x['k']} {x['recall']:.1f}% {_ci(x['ci'])}" for x in t["recall"])
    b = t["bootstrap"]
    sizes = t.get("adaptation", {}).get("sizes", {})
    negatives = t.get("adaptation", {}).get("hard_negatives")
    penalty = t.get("rank_penalty")
    trained = (f" The adaptation trained on {sizes['train']} questions"
               + (f" and {negatives} retrieved-but-wrong passages as \"no answer\"" if negatives else "")
               + f" and chose its threshold ({t['null_threshold']:+.2f})"
               + (f" and its rank penalty ({penalty:.0f} per place)" if penalty is not None
                  and t.get("read_depth", 2) != 1 else "")
               + (f" and how many retrieved passages it reads (the first {t['read_depth']}: the top-k rows below "
                  f"retrieve k and read at most that many)" if t.get("read_depth") else "")
               + f" on {sizes['validation']}." if sizes else "")
    head = ("| | exact match % [95% interval] | F1 % [95% interval] | right (lenient) % [95% interval] | "
            "unanswerable refused |\n|---|---|---|---|---|\n" if lenient
            else "| | exact match % [95% interval] | F1 % [95% interval] |\n|---|---|---|\n")
    return (f"**Before and after adaptation, on the glossary's test split**: {t['questions']} questions "
            f"({t['answerable']} answerable, {t['unanswerable']} unanswerable) about {t['test_passages']} passages "
            f"that no training or validation question was written on.{trained} Measured once, when the adapted "
            f"reader was built (in {t['build_s']:.0f} s on the machine that built it); shown here as stored.\n\n"
            + head + "\n".join(rows)
            + f"\n\n**Retriever** ({md_text(t.get('retriever', 'the embedder'))}, exact search over all "
            f"{t['passages']} glossary passages{_fused(t)}), on the {t['recall'][0]['questions']} answerable questions: "
            f"{recall}.\n\n{adaptation_notice(t)}\n\n<small>{ADAPT_TERMS.format(**b, chosen_on=_chosen_on(t))} "
            f"{LENIENT_TERMS if lenient else ''}{TERMS}</small>")


LENIENT_TERMS = ("*Right (lenient)*: what a person would call right though exact match does not: the answer contains "
                 "the reference or lies inside it (both normalised as for EM), or shares at least half its words "
                 "(F1 >= 0.5); on an unanswerable question only a refusal is right. *Rank penalty*: reading several "
                 "passages, a span loses this many logit points for each place its passage is below the "
                 "retriever's first, so the retriever's order counts as well as the reader's confidence. ")


def _fused(t: dict) -> str:
    """How the table's retrieval ranked, where it re-ranked with BM25 as Ask does."""
    r = t.get("retrieval") or {}
    if r.get("method") != "fused":
        return ""
    return f", its first {r['candidates']} re-ranked with BM25 as Ask retrieves: {md_text(r['line'])}"


def _chosen_on(t: dict) -> str:
    on = t.get("adaptation", {}).get("threshold_chosen_on", "")
    if on.startswith("top"):
        return f"end to end: the threshold that gave the best F1 reading the {on} passages, as Ask the corpus reads them"
    return "on each question's own passage"


def build_adaptation() -> None:
    """The chapter-7 table (stored figures: no button, nothing measured on a click)."""
    with gr.Accordion("The reader adapted to the glossary: before and after (chapter 7)", open=False):
        gr.Markdown(adaptation_markdown(search.reader_adaptation()), elem_id="search-adaptation")
