"""What the Pipelines tab draws from a plain result: label bars, tables, highlights, ROUGE bars."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from backend.runtime import config

from components.shell import md_text, model_badge, notice, short

LABEL_HEADERS = ["#", "top label", "score", "text", "all scores"]  # key columns first
LABEL_WIDTHS = ["7%", "17%", "11%", "38%", "27%"]  # percentages: "auto" took the whole width
FALLBACK_BADGE = "`fallback: small chat model, English`"
FINISH_WORDS = {"eos": "the model ended the text", "length": "reached max new tokens",
                "stopped": "stopped by you", "time budget": "stopped at the time budget"}


def badge(result: dict) -> str:
    """Which checkpoint served the result (common badge), the method, and any notices.

    A fallback says so first, where a reader looks before reading the result."""
    text = ""
    if result.get("method") in (config.METHOD_INSTRUCT, config.METHOD_SPAN):
        text = f"{FALLBACK_BADGE} weaker than the book's dedicated model; answers may be wrong\n\n"
    text += model_badge(result["model"], result["seconds"])
    text += wait_line(result)
    text += f"\n\n**method:** {md_text(result['method'])}"  # the API's identifier; the badge says what it is
    finish = result.get("finish_reason") or (result.get("decoding") or {}).get("finish_reason")
    if finish in ("stopped", "time budget"):
        text += f" · **{FINISH_WORDS[finish]}**"
    if result.get("scoring"):
        text += f" · scores: {md_text(result['scoring'])}"
    for note in result.get("notices", []):
        text += f"\n\n> {md_text(note)}"
    return text


def plot_text(text) -> str:
    """A visitor's text (a zero-shot label, a sequence) as Plotly shows it, never as markup:
    Plotly reads <a href>, <b>, <br> in tick labels and legends, and &lt; &gt; &amp; as entities."""
    return html.escape(str(text), quote=False)


def percent(x: float) -> str:
    """A share as a percentage that never rounds a part up to the whole (99.6% is not "100%")
    nor a little down to nothing ("<1%", not "0%")."""
    x = float(x)
    if 0 < x < 0.995 or x in (0.0, 1.0) or x > 1:
        return f"{x:.0%}" if x >= 0.01 or x == 0 else "<1%"
    return f"{x:.1%}" if x < 0.9995 else ">99.9%"


def label_bars(results: list[dict], title: str, xaxis: str = "score", multi_label: bool = False) -> go.Figure:
    fig = go.Figure()
    for res in results[:8]:
        fig.add_bar(y=[plot_text(label) for label in res["labels"][::-1]], x=res["scores"][::-1], orientation="h",
                    name=plot_text(short(res["sequence"])),
                    text=[f"{s:.3f}" for s in res["scores"][::-1]], textposition="auto")
    fig.update_layout(title=title, xaxis_title=xaxis, barmode="group", height=280 + 24 * len(results[0]["labels"]),
                      margin=dict(l=10, r=10, t=40, b=10), showlegend=len(results) > 1,
                      xaxis=dict(range=[0, 1]))
    return notice(fig, label_notice(results, multi_label))


def label_notice(results: list[dict], multi_label: bool = False) -> str:
    """The first text's winning label and its margin over the runner-up; in multi-label mode no
    label "wins": each is scored on its own, and the line says how many pass 0.5."""
    r = results[0] if results else None
    if not r or not r.get("labels"):
        return ""
    if multi_label:
        passing = sum(s > 0.5 for s in r["scores"])
        said = (f"each label is scored on its own (the scores need not sum to 1): {passing} of {len(r['labels'])} "
                f"score above 0.5 and could all apply; the highest is '{short(str(r['labels'][0]))}' "
                f"({r['scores'][0]:.2f})")
        if len(results) > 1:
            said += f" for the first text ({len(results)} texts: one bar colour each)"
        return said + ". A score is the model's confidence, not a guarantee that it is right."
    said = f"'{short(str(r['labels'][0]))}' wins with {r['scores'][0]:.2f}"
    if len(r["labels"]) > 1:
        said += f", {r['scores'][0] - r['scores'][1]:.2f} ahead of '{short(str(r['labels'][1]))}'"
    if len(results) > 1:
        said += f" for the first text ({len(results)} texts: one bar colour each)"
    return said + ". A score is the model's confidence, not a guarantee that it is right."


def label_table(results: list[dict]) -> list[list]:
    rows = []
    for i, res in enumerate(results, 1):
        scores = dict(zip(res["labels"], res["scores"]))
        rows.append([i, res["labels"][0], round(res["scores"][0], 4), short(res["sequence"], 200),
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


def wait_line(result: dict) -> str:
    """What the request waited for (a first use's load, conversion or training), as part of its
    total time: the badge's time is the learner's whole wait, this says where it went."""
    waited = [w for w in result.get("waited") or [] if w.get("seconds") is not None]
    if not waited:
        return ""
    parts = [f"{w['seconds']:.2f} s {md_text(w['for'])}" for w in waited]
    rest = max(0.0, result["seconds"] - sum(w["seconds"] for w in waited))
    return f"\n\n**Waited:** {'; '.join(parts)}; then {rest:.2f} s for this request's work."


ENTITY_COLUMNS = ["text #", "type", "entity", "score", "start", "end"]


def entity_rows(results: list[dict]):
    """The entities as a table with only the columns that carry values: the text's number only
    in batch mode (several texts), the score only when the method gives scores."""
    import pandas as pd

    rows = [[i, e["entity_group"], e["word"], None if e.get("score") is None else round(e["score"], 4),
             e["start"], e["end"]] for i, x in enumerate(results, 1) for e in x["entities"]]
    frame = pd.DataFrame(rows, columns=ENTITY_COLUMNS)
    drop = [] if len(results) > 1 else ["text #"]
    if not rows or all(r[3] is None for r in rows):
        drop.append("score")
    return frame.drop(columns=drop)


def entity_table_label(results: list[dict]) -> str:
    """The table's label: says why a column is missing."""
    scored = any(e.get("score") is not None for x in results for e in x["entities"])
    found = any(x["entities"] for x in results)
    if found and not scored:
        return "Entities (no score column: this method lists entities without a confidence)"
    return "Entities"


NO_ANSWER = "No answer in this text"


def answer_highlight(r: dict) -> dict:
    """The best answer and its non-overlapping alternatives marked in the context.

    When the model says the text has no answer, nothing is marked: the spans it rejected are in
    the table only."""
    entities, taken = [], []
    for rank, a in enumerate([] if r.get("no_answer") else r["answers"], 1):
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
    """Rows in the table's order: rank, score, answer, match, start, end (key columns first)."""
    return [[i, None if a["score"] is None else round(a["score"], 4), a["answer"], a.get("match", ""), a["start"],
             a["end"]] for i, a in enumerate(r["answers"], 1)]


def answer_markdown(r: dict) -> str:
    if r.get("no_answer"):
        text = f"### {NO_ANSWER}"
        if r.get("absent_terms"):
            return text + "\nthe text never mentions " + ", ".join(f"\"{md_text(w)}\"" for w in r["absent_terms"]) + \
                " (the question's topic): the spans in the table are what the model would have copied"
        if r.get("no_answer_score") is not None:
            text += f"\nscore of the reply \"{md_text(r.get('no_answer_reply', 'not in the text'))}\" " \
                    f"{r['no_answer_score']:.3f}"
            if r["answers"]:
                text += f"; of the best span, \"{md_text(short(r['answers'][0]['answer'], 60))}\", " \
                        f"{r['answers'][0]['score']:.3f}"
        if r.get("margin") is not None and r.get("threshold") is not None:  # the reader: logits of span and [CLS]
            text += f"\nbest span - [CLS] = {r['margin']:+.2f} (start + end logits), not above the threshold " \
                    f"{r['threshold']:+.2f}"
        return text
    text = f"### {md_text(r['answer']) if r['answer'] else '(no answer)'}"
    if r["score"] is not None:
        text += f"\nscore {r['score']:.3f}"
    strength = r.get("strength")
    if strength:
        text += f"\n\n{'**' if strength['weak'] else ''}{md_text(strength['text'])}{'**' if strength['weak'] else ''}"
    return text


def rouge_bars(r: dict):
    """ROUGE F1 of the model's summary and of the book's baseline (the first three sentences),
    side by side, against the reference given with this text; None without one."""
    rouge = r.get("rouge")
    if not rouge:
        return None
    names = list(rouge)
    fig = go.Figure()
    series = [("model summary", rouge)]
    if (r.get("baseline") or {}).get("rouge"):
        series.append(("baseline: first 3 sentences", r["baseline"]["rouge"]))
    if (r.get("extractive") or {}).get("rouge"):
        series.append(("extractive (MMR)", r["extractive"]["rouge"]))
    for name, scores in series:
        fig.add_bar(x=names, y=[scores[n]["f1"] for n in names], name=name,
                    text=[f"{scores[n]['f1']:.2f}" for n in names], textposition="auto")
    fig.update_layout(title="ROUGE F1 against the reference for this text", barmode="group",
                      yaxis=dict(range=[0, 1], title="F1"), height=300, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.15))
    said = f"the model's summary scores ROUGE-1 F1 {rouge[names[0]]['f1']:.2f}" if names else ""
    base = (r.get("baseline") or {}).get("rouge")
    if said and base and names[0] in base:
        diff = rouge[names[0]]["f1"] - base[names[0]]["f1"]
        said += (f", {abs(diff):.2f} {'above' if diff >= 0 else 'below'} the first-three-sentences baseline "
                 f"({base[names[0]]['f1']:.2f}): a baseline that hard to beat is why the book reports it")
    return notice(fig, said + "." if said else "")


def rouge_table(r: dict) -> str:
    """A small Markdown table: precision / recall / F1 per ROUGE type, model vs baseline vs extractive; or the
    one line saying why there is no score."""
    rouge = r.get("rouge")
    if not rouge:
        return ("*No ROUGE: no reference was given with this text. Pick an example, or paste a reference "
                "summary written for this text.*")
    base = (r.get("baseline") or {}).get("rouge") or {}
    lines = ["| | " + " | ".join(f"{n} P / R / F1" for n in rouge) + " |",
             "|---|" + "---|" * len(rouge)]
    ext = (r.get("extractive") or {}).get("rouge") or {}
    for name, scores in (("model summary", rouge), ("baseline: first 3 sentences", base), ("extractive (MMR)", ext)):
        if scores:
            cells = [f"{scores[n]['precision']:.2f} / {scores[n]['recall']:.2f} / **{scores[n]['f1']:.2f}**"
                     for n in rouge]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def output_label(r: dict, what: str, verb: str) -> str:
    """The output box's label says what produced the text: the fallback is not the book's model."""
    if r.get("method") == config.METHOD_INSTRUCT:
        return f"{what} by the {config.method_name(config.METHOD_INSTRUCT)}: a small chat model prompted to {verb}"
    return f"{what} by {r['model'].get('checkpoint') or 'the model'}"


def bleu_line(r: dict) -> str:
    info = f"**{md_text(r['language_pair'])}**"
    if "bleu" in r:
        b = r["bleu"]
        info += f" · **BLEU {b['bleu']:.1f}** against the reference given with this text ({bleu_breakdown(b)})"
    else:
        info += " · no BLEU: no reference translation was given with this text"
    return info


def bleu_breakdown(b: dict) -> str:
    """What sacrebleu counted: matching n-grams of the prediction's n-grams, per order, and which
    precisions are its smoothing (an order with no match gets a small made-up precision, not 0)."""
    if "counts" not in b:  # an older result: precisions only
        return "n-gram precisions " + ", ".join(f"{p:.0f}" for p in b["precisions"]) + \
            f"; brevity penalty {b['brevity_penalty']:.2f}"
    kinds = b.get("precision_kinds") or []
    parts = [f"{n}-grams {c}/{t}" for n, (c, t) in enumerate(zip(b["counts"], b["totals"]), start=1)]
    said = "matching " + ", ".join(parts)
    smoothed = [n for n, k in enumerate(kinds, start=1) if k == "smoothed"]
    if smoothed:
        made_up = ", ".join(f"{b['precisions'][n - 1]:.1f}" for n in smoothed)
        said += (f"; no {'/'.join(map(str, smoothed))}-gram matches: sacrebleu's exp smoothing stands in a small "
                 f"precision there ({made_up}), not a match")
    return said + f"; brevity penalty {b['brevity_penalty']:.2f}"


MASK_HEADERS = ["token", "probability", "sequence"]
DECODER_MASK_HEADERS = ["word", "rerank score", "P(word | left)", "left rank", "sentence log-lik", "sequence"]


def mask_bars(r: dict) -> go.Figure:
    """The candidates' probabilities; for the decoder, both scores side by side."""
    cands = r["candidates"][::-1]
    words = [plot_text(c["token_str"]) for c in cands]
    fig = go.Figure()
    if "left_prob" in (r["candidates"][0] if r["candidates"] else {}):
        fig.add_bar(y=words, x=[c["score"] for c in cands], orientation="h", name="after the rerank (whole sentence)",
                    text=[f"{c['score']:.3f}" for c in cands], textposition="auto")
        fig.add_bar(y=words, x=[c["left_prob"] for c in cands], orientation="h", name="P(word | left context)",
                    text=[f"{c['left_prob']:.3f}" for c in cands], textposition="auto")
        title = "Decoder fill-mask: left-context candidates, reranked by the whole sentence"
    else:
        fig.add_bar(y=words, x=[c["score"] for c in cands], orientation="h",
                    text=[f"{c['score']:.3f}" for c in cands], textposition="auto")
        title = "P(token | context) at [MASK]"
    fig.update_layout(title=title, barmode="group", height=280 + 36 * len(cands),
                      margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.12),
                      xaxis=dict(range=[0, 1], title="probability"))
    top = r["candidates"][0] if r["candidates"] else None
    if top is None:
        return fig
    said = f"the model's first choice is '{top['token_str'].strip()}' ({percent(top['score'])})"
    k = len(r["candidates"])
    if k > 1 and "left_prob" in top:  # the rerank is a softmax over its own candidates, not over the vocabulary
        pool = r.get("n_reranked") or k
        said += (f"; the top {k} together hold {percent(sum(c['score'] for c in r['candidates']))} of the rerank's "
                 f"probability, which is shared among the {pool} candidates reranked, not the whole vocabulary (after "
                 f"the left context alone these {k} words hold {percent(sum(c['left_prob'] for c in r['candidates']))}"
                 " of the vocabulary's)")
    elif k > 1:
        said += f"; the top {k} together hold {percent(sum(c['score'] for c in r['candidates']))}"
    return notice(fig, said + ".")


def mask_rows(candidates: list[dict]):
    """A table: both scores for the decoder's candidates, the probability for a masked LM's."""
    import pandas as pd

    if candidates and "left_prob" in candidates[0]:
        rows = [[c["token_str"], round(c["score"], 4), f"{c['left_prob']:.2e}" if c["left_prob"] < 1e-3
                 else round(c["left_prob"], 4), c["left_rank"], round(c["sentence_logprob"], 2), c["sequence"]]
                for c in candidates]
        return pd.DataFrame(rows, columns=DECODER_MASK_HEADERS)
    return pd.DataFrame([[c["token_str"], round(c["score"], 4), c["sequence"]] for c in candidates],
                        columns=MASK_HEADERS)


def token_counter(n: int, total, r: dict | None = None) -> str:
    """While streaming: tokens so far of the maximum; at the end: the count, speed and why it ended."""
    try:
        limit = f" / {int(total)}"
    except (TypeError, ValueError, OverflowError):
        limit = ""
    if r is None:
        return f"**{n}**{limit} new tokens…"
    d = r.get("decoding") or {}
    text = f"**{n}**{limit} new tokens"
    if d.get("tokens_per_s"):
        text += f" · {d['tokens_per_s']:.1f} tokens/s"
    if d.get("finish_reason") in FINISH_WORDS:
        text += f" · {FINISH_WORDS[d['finish_reason']]}"
    return text
