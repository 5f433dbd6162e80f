"""Ask the corpus's answer as the page shows it, from /ask_corpus's plain result: which answer to trust and
why, the retrieved passages with their scores, the extractive reader's answer first (its span highlighted in
its passage, its margin; a refusal names the passage that came closest), then the generated answer with what
the retrieved passages do not support marked (folded away when anything is), and its citations. Only what
the result holds is shown: no link or note of our own."""

from __future__ import annotations

import html

from backend.search.trust import closest_words
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


def _score(p: dict) -> str:
    if "bm25" in p:
        return (f": fused {p['score']:.3f} (cosine {p['dense']:.3f}, dense rank {p['dense_rank']}; "
                f"BM25 {p['bm25']:.2f})")
    return f": {p['score']:.3f}" if "score" in p else ""


def passages_md(passages: list[dict], retrieval: dict | None = None) -> str:
    """The retrieved passages, best first, each with the retriever's score (fused: with its cosine and BM25),
    after the line that says which retrieval served."""
    rows = "\n".join(f"- \\[{i}\\] {md_text(p.get('title') or 'untitled')}{_score(p)}"
                     for i, p in enumerate(passages, start=1))
    said = f"**Retrieval:** {md_text(retrieval['line'])}\n\n" if retrieval and retrieval.get("line") else ""
    if retrieval and retrieval.get("method") == "fused":
        return f"{said}**Retrieved passages** (fused score, best first; the readers read these):\n\n{rows}"
    return (f"{said}**Retrieved passages** (score: the cosine similarity of the passage's and the question's "
            f"embeddings; the readers read these):\n\n{rows}")


def extractive_md(ext: dict, passages: list[dict]) -> str:
    """The extractive reader's answer: the span highlighted in its passage, and the margin it won by; a refusal
    names the passage that came closest."""
    model = ext.get("model") or {}
    name = md_text(model.get("checkpoint", "the reader")) + (f", {md_text(model['method'])}" if model.get("method") else "")
    if ext.get("no_answer") or not ext.get("passage"):
        margins = ", ".join(f"\\[{p['passage']}\\] {p['margin']:+.2f}" for p in ext.get("per_passage") or []
                            if p.get("margin") is not None)
        read = ext.get("read", len(passages))
        where = ("every retrieved passage" if read >= len(passages) else
                 f"the first {read} of the {len(passages)} retrieved passages, the ones it reads (how many it reads "
                 "was chosen on validation questions: each further passage is one more chance to be fooled)")
        return (f"**Extractive answer** ({name}, a span head that may answer 'no answer'): **no answer** on {where} "
                f"(margin, best span - \\[CLS\\] logit: {margins or 'none'}; it answers only above "
                f"{_threshold(ext)}). Nearest miss: {md_text(closest_words(ext, passages))}.")
    i = ext["passage"]
    p = passages[i - 1]
    text, start, end = p["text"], ext["start"], ext["end"]
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    snippet = (("..." if lo else "") + md_text(text[lo:start]) + f'<mark class="tlab-span">{md_text(text[start:end])}</mark>'
               + md_text(text[end:hi]) + ("..." if hi < len(text) else ""))
    return (f"**Extractive answer** ({name}, a span copied from a passage): **{md_text(ext['answer'])}** from "
            f"\\[{i}\\] {md_text(p['title'])}; margin: best span - \\[CLS\\] (no answer) logit = {ext['margin']:+.2f} "
            f"(it answers above {_threshold(ext)}).\n\n> {snippet}")


def _threshold(ext: dict) -> str:
    t = ext.get("threshold")
    return "its threshold" if t is None else f"{t:+.2f}, its threshold chosen on the validation split"


def _generated_block(out: dict, where: str) -> str:
    """The generated answer with its support check; folded away (a <details> closed) when the check found
    something no passage contains."""
    passages = out["passages"]
    cited = ", ".join(f"\\[{c}\\] {md_text(passages[c - 1]['title'])}" for c in out["cited"])
    src = "" if out.get("citations_from", "reader") == "reader" else f" (by {md_text(out['citations_from'])})"
    body = [f"{marked_answer(out['answer'], out.get('support')) or '(no answer)'}"]
    if out.get("support"):
        body.append(support_line(out["support"]))
    body.append(f"**Cited passages{src}:** {cited or 'none'}")
    head = f"Generated answer (the instruct decoder wrote it from the passages{where})"
    n = ((out.get("support") or {}).get("counts") or {}).get("total")
    if n:
        summary = f"{head}: not supported, {n} item{'s' if n != 1 else ''} no passage contains (open to read it)"
        return f"<details><summary><b>{summary}</b></summary>\n\n" + "\n\n".join(body) + "\n\n</details>"
    return f"**{head}:** " + "\n\n".join(body)


def answer_markdown(out: dict) -> str:
    """The whole answer block for /ask_corpus's result `out`: which answer to trust, the retrieved passages,
    the extractive answer, then the generated one."""
    passages = out["passages"]
    notes = "".join(f"> {md_text(n)}\n\n" for n in out.get("notices") or [])
    eng = out.get("engine") or {}
    where = (f" on the **{md_text(eng['kind'])} server** at {md_text(eng.get('url'))}"
             if eng.get("kind") not in (None, "in-process") else "")
    if out["reader_method"] == "model":
        cited = ", ".join(f"\\[{c}\\] {md_text(passages[c - 1]['title'])}" for c in out["cited"])
        return "\n\n".join([f"{notes}**Answer** (an extractive QA model picked this span{where}): "
                              f"{md_text(out['answer']) or '(no answer)'}", f"**Cited passages:** {cited or 'none'}",
                              passages_md(passages, out.get("retrieval"))])
    lines = [notes + (f"**Which to trust:** {md_text(out['trust']['line'])}" if out.get("trust") else ""),
             passages_md(passages, out.get("retrieval"))]
    if out.get("extractive"):
        lines.append(extractive_md(out["extractive"], passages))
    elif out.get("extractive_absent"):
        lines.append(f"**Extractive answer:** none: {md_text(out['extractive_absent'])}")
    lines.append(_generated_block(out, where))
    return "\n\n".join(line for line in lines if line)
