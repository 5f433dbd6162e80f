"""What the Summarization tab draws from /summarize's chapter 6 fields: the summary with the
words its text does not support marked, their count and why abstractive models do this; the
extractive summary's label."""

from __future__ import annotations

import html

KIND_WORDS = {"number": "number", "name": "name", "word": "word"}


def support_html(r: dict) -> str:
    """The summary with each unsupported item in a <mark> whose title says why, then the count
    and a one-line explanation. Offsets are the backend's, into the summary as returned."""
    s = r.get("support") or {}
    summary = r.get("summary") or ""
    items = sorted(s.get("unsupported") or [], key=lambda i: i["start"])
    parts, at = [], 0
    for i in items:
        if i["start"] < at:
            continue
        parts.append(html.escape(summary[at:i["start"]]))
        title = f"not in the text ({KIND_WORDS.get(i['kind'], i['kind'])}): {i['reason']}"
        parts.append(f'<mark class="tlab-unsupported tlab-unsupported-{html.escape(i["kind"])}" '
                     f'title="{html.escape(title, quote=True)}">{html.escape(summary[i["start"]:i["end"]])}</mark>')
        at = i["end"]
    parts.append(html.escape(summary[at:]))
    counts, checked = s.get("counts") or {}, s.get("checked") or {}
    total = counts.get("total", 0)
    kinds = ", ".join(f"{counts.get(k, 0)} of {checked.get(k, 0)} {k}s" for k in ("number", "name", "word"))
    count = (f"<b>{total} item{'s' if total != 1 else ''} the text does not support</b> ({kinds} checked; "
             f"names from {html.escape(s.get('names_from', '?'))})")
    note = f"<br><i>{html.escape(s['note'])}</i>" if s.get("note") else ""
    why = html.escape(s.get("why") or "")
    return (f'<div class="tlab-support"><p class="tlab-support-summary">{"".join(parts)}</p>'
            f'<p class="tlab-support-count" id="pl-summarize-support-count">{count}{note}</p>'
            f'<p class="tlab-support-why">{why} Hover a mark to see why it is flagged.</p></div>')


def extractive_label(r: dict) -> str:
    ext = r.get("extractive")
    if not ext:
        return "Extractive summary: none"
    picked = ", ".join(str(i + 1) for i in ext["picked"])
    return f"Extractive: sentences {picked} of {ext['sentences_in_text']}, picked by {ext['name']}"
