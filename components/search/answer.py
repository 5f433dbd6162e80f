"""Ask the corpus's answer as the page shows it, from /ask_corpus's plain result: the generated answer with
what the retrieved passages do not support marked, its citations, and the extractive reader's answer beside
it (its span in its passage, and its score). Only what the result holds is shown: no link or note of our own."""

from __future__ import annotations

import html

from components.shell import md_text

KIND_WORDS = {"number": "number", "name": "name", "word": "word", "link": "link", "citation": "citation"}
CONTEXT_CHARS = 160  # passage text shown on each side of the extractive span


def marked_answer(answer: str, support: dict | None) -> str:
    """The answer (Markdown-safe) with each unsupported item in a <mark> whose title says why."""
    items = sorted((support or {}).get("unsupported") or [], key=lambda i: i["start"])
    parts, at = [], 0
    for i in items:
        if i["start"] < at:
            continue
        parts.append(md_text(answer[at:i["start"]]))
        title = f"not in the passages ({KIND_WORDS.get(i['kind'], i['kind'])}): {i['reason']}"
        parts.append(f'<mark class="tlab-unsupported tlab-unsupported-{html.escape(i["kind"])}" '
                     f'title="{html.escape(title, quote=True)}">{md_text(answer[i["start"]:i["end"]])}</mark>')
        at = i["end"]
    parts.append(md_text(answer[at:]))
    return "".join(parts)


def support_line(support: dict) -> str:
    counts, checked = support.get("counts") or {}, support.get("checked") or {}
    total = counts.get("total", 0)
    kinds = ", ".join(f"{counts.get(k, 0)} of {checked.get(k, 0)} {k}s" for k in ("number", "name", "word"))
    links = f"; {counts['link']} link(s) no passage contains" if counts.get("link") else ""
    links += f"; {counts['citation']} citation(s) of a passage not retrieved" if counts.get("citation") else ""
    return (f"**Not in the passages:** {total} item{'s' if total != 1 else ''} ({kinds} checked{links}; names from "
            f"{md_text(support.get('names_from', '?'))}), checked against {md_text(support.get('against', 'the passages'))}. "
            f"{md_text(support.get('why', ''))} Hover a mark to see why it is flagged.")


def extractive_md(ext: dict, passages: list[dict]) -> str:
    """The extractive reader's answer: the span in its passage, and the score it won by."""
    model = ext.get("model") or {}
    name = md_text(model.get("checkpoint", "the reader")) + (f", {md_text(model['method'])}" if model.get("method") else "")
    if ext.get("no_answer") or not ext.get("passage"):
        margins = ", ".join(f"\\[{p['passage']}\\] {p['margin']:+.2f}" for p in ext.get("per_passage") or []
                            if p.get("margin") is not None)
        return (f"**Extractive answer** ({name}, a span head that may answer 'no answer'): **no answer** on every "
                f"retrieved passage (best span - \\[CLS\\] logit: {margins or 'none'}; it answers only above "
                f"{_threshold(ext)}).")
    i = ext["passage"]
    p = passages[i - 1]
    text, start, end = p["text"], ext["start"], ext["end"]
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    snippet = (("..." if lo else "") + md_text(text[lo:start]) + f"**{md_text(text[start:end])}**"
               + md_text(text[end:hi]) + ("..." if hi < len(text) else ""))
    return (f"**Extractive answer** ({name}, a span copied from a passage): **{md_text(ext['answer'])}** from "
            f"\\[{i}\\] {md_text(p['title'])}; score: best span - \\[CLS\\] (no answer) logit = {ext['margin']:+.2f} "
            f"(it answers above {_threshold(ext)}).\n\n> {snippet}")


def _threshold(ext: dict) -> str:
    t = ext.get("threshold")
    return "its threshold" if t is None else f"{t:+.2f}, its threshold chosen on the validation split"


def answer_markdown(out: dict) -> str:
    """The whole answer block for /ask_corpus's result `out`."""
    passages = out["passages"]
    notes = "".join(f"> {md_text(n)}\n\n" for n in out.get("notices") or [])
    cited = ", ".join(f"\\[{c}\\] {md_text(passages[c - 1]['title'])}" for c in out["cited"])
    src = "" if out.get("citations_from", "reader") == "reader" else f" (by {md_text(out['citations_from'])})"
    eng = out.get("engine") or {}
    where = (f" on the **{md_text(eng['kind'])} server** at {md_text(eng.get('url'))}"
             if eng.get("kind") not in (None, "in-process") else "")
    if out["reader_method"] == "model":
        head = f"**Answer** (an extractive QA model picked this span{where}): "
    else:
        head = f"**Generated answer** (the instruct decoder wrote it from the passages{where}; check it): "
    lines = [f"{notes}{head}{marked_answer(out['answer'], out.get('support')) or '(no answer)'}"]
    if out.get("support"):
        lines.append(support_line(out["support"]))
    lines.append(f"**Cited passages{src}:** {cited or 'none'}")
    if out.get("extractive"):
        lines.append(extractive_md(out["extractive"], passages))
    elif out.get("extractive_absent"):
        lines.append(f"**Extractive answer:** none: {md_text(out['extractive_absent'])}")
    return "\n\n".join(lines)
