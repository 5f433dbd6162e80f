"""What the Pipelines tab draws from a plain result: label bars, tables, highlights, ROUGE bars."""

from __future__ import annotations

import plotly.graph_objects as go

from components.common import md_text, model_badge, short

LABEL_HEADERS = ["#", "text", "top label", "score", "all scores"]


def badge(result: dict) -> str:
    """Which checkpoint served the result (common badge), the method, and any notices."""
    text = model_badge(result["model"], result["seconds"])
    text += f"\n\n**method:** {md_text(result['method'])}"
    if result.get("scoring"):
        text += f" · scores: {md_text(result['scoring'])}"
    for note in result.get("notices", []):
        text += f"\n\n> {md_text(note)}"
    return text


def label_bars(results: list[dict], title: str, xaxis: str = "score") -> go.Figure:
    fig = go.Figure()
    for res in results[:8]:
        fig.add_bar(y=res["labels"][::-1], x=res["scores"][::-1], orientation="h",
                    name=short(res["sequence"]),
                    text=[f"{s:.3f}" for s in res["scores"][::-1]], textposition="auto")
    fig.update_layout(title=title, xaxis_title=xaxis, barmode="group", height=280 + 24 * len(results[0]["labels"]),
                      margin=dict(l=10, r=10, t=40, b=10), showlegend=len(results) > 1,
                      xaxis=dict(range=[0, 1]))
    return fig


def label_table(results: list[dict]) -> list[list]:
    rows = []
    for i, res in enumerate(results, 1):
        scores = dict(zip(res["labels"], res["scores"]))
        rows.append([i, short(res["sequence"], 80), res["labels"][0], round(res["scores"][0], 4),
                     ", ".join(f"{k}: {v:.3f}" for k, v in scores.items())])
    return rows


def entity_highlight(texts: list[str], per_text: list[list[dict]]) -> dict:
    """Several texts joined by blank lines, entity offsets shifted to match."""
    joined, entities, offset = "", [], 0
    for i, (text, ents) in enumerate(zip(texts, per_text)):
        if i:
            joined += "\n\n"
            offset += 2
        for e in ents:
            entities.append({"entity": e["entity_group"], "start": e["start"] + offset, "end": e["end"] + offset})
        joined += text
        offset += len(text)
    return {"text": joined, "entities": entities}


def entity_rows(results: list[dict]) -> list[list]:
    return [[i, e["entity_group"], e["word"], None if e["score"] is None else round(e["score"], 4), e["start"], e["end"]]
            for i, x in enumerate(results, 1) for e in x["entities"]]


def answer_highlight(r: dict) -> dict:
    """The best answer and its non-overlapping alternatives marked in the context."""
    entities, taken = [], []
    for rank, a in enumerate(r["answers"], 1):
        if a["start"] is None:
            continue
        if any(not (a["end"] <= s or a["start"] >= e) for s, e in taken):
            continue  # overlapping alternatives stay in the table only
        score = "" if a["score"] is None else f" {a['score']:.2f}"
        entities.append({"entity": ("answer" if rank == 1 else f"#{rank}") + score,
                         "start": a["start"], "end": a["end"]})
        taken.append((a["start"], a["end"]))
    return {"text": r["context"], "entities": entities}


def answer_rows(r: dict) -> list[list]:
    return [[i, a["answer"], None if a["score"] is None else round(a["score"], 4), a["start"], a["end"],
             a.get("match", "")] for i, a in enumerate(r["answers"], 1)]


def answer_markdown(r: dict) -> str:
    text = f"### {md_text(r['answer']) if r['answer'] else '(no answer)'}"
    if r["score"] is not None:
        text += f"\nscore {r['score']:.3f}"
    return text


def rouge_bars(rouge: dict | None):
    if not rouge:
        return None
    names = list(rouge)
    fig = go.Figure()
    for key in ("precision", "recall", "f1"):
        fig.add_bar(x=names, y=[rouge[n][key] for n in names], name=key,
                    text=[f"{rouge[n][key]:.2f}" for n in names], textposition="auto")
    fig.update_layout(title="ROUGE against the reference", barmode="group", yaxis=dict(range=[0, 1]),
                      height=300, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def bleu_line(r: dict) -> str:
    info = f"**{md_text(r['language_pair'])}**"
    if "bleu" in r:
        b = r["bleu"]
        info += (f" · **BLEU {b['bleu']:.1f}** (n-gram precisions "
                 + ", ".join(f"{p:.0f}" for p in b["precisions"]) + f"; brevity penalty {b['brevity_penalty']:.2f})")
    return info


def mask_bars(candidates: list[dict]) -> go.Figure:
    fig = go.Figure(go.Bar(y=[c["token_str"] for c in candidates][::-1], x=[c["score"] for c in candidates][::-1],
                           orientation="h", text=[f"{c['score']:.3f}" for c in candidates][::-1]))
    fig.update_layout(title="P(token | context) at [MASK]", height=260 + 20 * len(candidates),
                      margin=dict(l=10, r=10, t=40, b=10))
    return fig


def mask_rows(candidates: list[dict]) -> list[list]:
    return [[c["token_str"], round(c["score"], 4), c["sequence"]] for c in candidates]
