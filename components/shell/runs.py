"""Runs kept side by side: each tab keeps this session's last runs, and any two open side by side with
their differences marked; each run's link reopens it (its inputs, by the same path as a shared link).

A tab places `panel(key)` where its "Your runs" accordion belongs and, once it has registered its link
(`links.register`), calls `track(panel, event, parts)`: after each successful `event` the run is
recorded as (number, time, the tab's link for that run, a short title, its text summary: the `parts`,
e.g. the result's main text, its stats line, its model badge, a plot's "What to notice" line).

The runs live in the page, not on the server: a hidden text box holds them as JSON (a text box: its
value is no text on the page, which a JSON viewer's would be) (at most `KEEP` per tab, each
summary capped), travels to the server only when a run is recorded or two are picked, and comes back
with the new list; nothing is kept per visitor here. `wire()` (app.py, once every tab registered its
link) places the script through which a run's link reopens its run in place (page_query opens it).

The stored list comes back from the page, so it is a stranger's data: `clean` keeps only well-formed
runs, every text is escaped when drawn, and a reopened link is validated like any link (links.apply).
"""

from __future__ import annotations

import difflib
import html
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from components.shell import gradio_patches, lifecycle, links
from components.shell.figures import NOTICE_PREFIX
from components.shell.widgets import CheckboxGroup, Textbox

ASSETS = Path(__file__).resolve().parent / "assets"
KEEP = 8  # runs kept per tab
SUMMARY_MAX = 2000  # characters of one run's summary
TITLE_MAX = 90
QUERY_MAX = links.QUERY_MAX  # a link with every text input at its cap, and the rest
STORE_MAX = 2 * KEEP * (QUERY_MAX + SUMMARY_MAX + TITLE_MAX + 100)  # the kept runs' JSON text, escapes included
PLOT_JSON_MAX = 5_000_000  # characters of a plot's JSON read for its notice line
RUNS_JS = (ASSETS / "runs.js").read_text()
RUNS_CSS = (ASSETS / "runs.css").read_text()
NUMBER = re.compile(r"[-+−]?\d[\d,.]*%?")


# ---------------------------------------------------------------- plain data (unit-tested)
def _plain(text: str) -> str:
    """Markdown as a learner reads it: no emphasis marks, escapes or link syntax."""
    text = re.sub(r"(?is)<(style|script)\b.*?</\1>", " ", text)  # an HTML result's styles and scripts
    # a tag in an HTML result: `<` then a letter, `/` or `!` (a "< 0.5x" in a sentence is no tag; not md_text's \<)
    text = re.sub(r"(?<!\\)<[A-Za-z/!][^<>]{0,200}>", " ", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [words](url) -> words
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)  # Markdown's escapes (any ASCII punctuation: md_text's \:)
    pieces = re.split(r"(`[^`\n]*`)", text)  # code spans keep their characters (a spec's `L3H*=0`)
    text = "".join(piece[1:-1] if i % 2 else re.sub(r"\*\*|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])", "", piece)
                   for i, piece in enumerate(pieces))  # **bold**, *italic*
    text = html.unescape(text)  # md_text's &gt; and &lt; read as > and <
    text = re.sub(r"[ \t]+", " ", text)
    return re.sub(r"\s*\n\s*", "\n", text).strip()


def _part_text(value, markdown: bool = True) -> str:
    """One part of a result as text: a string (markdown read as plain words; a text box's text as it is), a
    plot's "What to notice" line, or the first rows of a table."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _plain(value) if markdown else value.strip()
    plot = getattr(value, "plot", None) if not isinstance(value, dict) else value.get("plot")
    if isinstance(plot, str) and len(plot) <= PLOT_JSON_MAX:
        try:
            meta = (json.loads(plot).get("layout") or {}).get("meta")
        except (ValueError, AttributeError):
            return ""
        said = meta.get("notice") if isinstance(meta, dict) else None
        return NOTICE_PREFIX + _plain(said) if isinstance(said, str) and said else ""
    rows = getattr(value, "values", None)  # a pandas DataFrame (gr.Dataframe's value)
    if rows is not None and hasattr(value, "columns"):
        head = " | ".join(str(c) for c in value.columns)
        body = [" | ".join(str(x) for x in row) for row in rows.tolist()[:8]]
        return "\n".join([head, *body])
    return ""


def summary_of(values, markdown=()) -> str:
    """A run's text summary from its parts' values (empty parts left out), capped at SUMMARY_MAX;
    `markdown[i]` False: part i is a text box's text, kept as it is (default: markdown)."""
    flags = list(markdown) + [True] * len(values)
    text = "\n".join(t for t in (_part_text(v, m) for v, m in zip(values, flags)) if t)
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 1] + "…"


def title_of(params, values, defaults) -> str:
    """What this run set: the link's values that differ from the tab's defaults, e.g. "strategy sample ·
    seed 7" (a long text shortened), else "defaults"."""
    said = []
    for p, value, default in zip(params, values, defaults):
        text, base = p.render(value), p.render(default)
        if text is None or text == base or text == "":
            continue
        text = " ".join(text.split())
        said.append((p.kind == "text" and len(text) > 8, f"{p.name} {text[:24] + '…' if len(text) > 25 else text}"))
    said.sort(key=lambda x: x[0])  # settings first, texts last (a long prompt would hide the settings)
    title = " · ".join(words for _, words in said) or "defaults"
    return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1] + "…"


def clean(raw) -> list[dict]:
    """The runs the page sent back (a list, or its JSON text), each well-formed (anything else dropped),
    the last KEEP."""
    if isinstance(raw, str) and len(raw) <= STORE_MAX:
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON; nested past the parser's depth
            return []
    if not isinstance(raw, list):
        return []
    out = []
    for run in raw[-KEEP:]:
        if not isinstance(run, dict):
            continue
        n, t = run.get("n"), run.get("t")
        texts = [run.get(k) for k in ("query", "title", "summary")]
        if (isinstance(n, int) and not isinstance(n, bool) and 0 < n < 10**9 and isinstance(t, (int, float))
                and not isinstance(t, bool) and 0 <= t < 2**31 and all(isinstance(x, str) for x in texts)):
            # a time the clock can show (NaN, infinity or 1e300 in a crafted store made the drawing raise)
            query, title, summary = texts
            out.append({"n": n, "t": float(t), "query": query[:QUERY_MAX], "title": title[:TITLE_MAX],
                        "summary": summary[:SUMMARY_MAX]})
    return out


def record(runs, query: str, title: str, summary: str, now: float | None = None) -> list[dict]:
    """The runs with this one added last (numbered after the last), the oldest dropped past KEEP."""
    runs = clean(runs)
    n = (runs[-1]["n"] + 1) if runs else 1
    run = {"n": n, "t": time.time() if now is None else now, "query": query, "title": title, "summary": summary}
    return clean(runs + [run])


def label(run: dict) -> str:
    said = f"run {run['n']} · {time.strftime('%H:%M:%S', time.gmtime(run['t']))} server clock"
    return f"{said} · {run['title']}" if run["title"] else said


def _words(text: str) -> list[str]:
    """Words with the spaces before them (the diff compares the words; the spaces are drawn as they were)."""
    return re.findall(r"\s*\S+", text)


def word_diff(a: str, b: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """difflib's word diff of two summaries: each side as (text, kind) pieces, kind "same", "changed"
    (words the other run does not have there) or "number" (a changed word that is a number)."""
    wa, wb = _words(a), _words(b)
    matcher = difflib.SequenceMatcher(None, [w.strip() for w in wa], [w.strip() for w in wb], autojunk=False)
    left: list[tuple[str, str]] = []
    right: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for side, words, lo, hi in ((left, wa, i1, i2), (right, wb, j1, j2)):
            for w in words[lo:hi]:
                kind = "same" if op == "equal" else "number" if NUMBER.search(w) else "changed"
                if side and side[-1][1] == kind == "same":
                    side[-1] = (side[-1][0] + w, kind)
                else:
                    side.append((w, kind))
    return left, right


def _marked(pieces: list[tuple[str, str]]) -> str:
    out = []
    for text, kind in pieces:
        lead = text[: len(text) - len(text.lstrip())]
        word = html.escape(text[len(lead):])
        out.append(html.escape(lead) + (word if kind == "same" else f"<mark class='tlab-run-{kind}'>{word}</mark>"))
    return "".join(out)


def _column(run: dict, pieces) -> str:
    href = html.escape("?" + run["query"], quote=True)
    return (f"<div class='tlab-run' data-run='{run['n']}'><div class='tlab-run-head'><b>{html.escape(label(run))}</b> "
            f"<a class='tlab-run-open tlab-open-here' href='{href}' target='_blank' rel='noopener' "
            f"title='{html.escape(REOPEN_SAYS, quote=True)}'>"
            f"Reopen this run's inputs</a></div>"
            f"<div class='tlab-run-text'>{_marked(pieces)}</div></div>")


REOPEN_SAYS = ("Reopening puts this run's inputs back in its tab; its result is not kept: run it again to see "
               "it (the summary here is what it showed).")


def side_by_side(a: dict, b: dict | None = None) -> str:
    """Two runs' summaries side by side, each word the other lacks marked (numbers that changed more
    strongly), each with its link; one run alone when `b` is None."""
    if b is None:
        return (f"<p class='tlab-runs-said'>{html.escape(REOPEN_SAYS)}</p>"
                f"<div class='tlab-runs-view'>{_column(a, [(a['summary'], 'same')])}</div>")
    left, right = word_diff(a["summary"], b["summary"])
    changed = sum(k != "same" for _, k in left + right)
    numbers = sum(k == "number" for _, k in left + right)
    said = ("The two summaries are the same word for word." if not changed else
            f"Marked: words one run has and the other has not there ({numbers} of them numbers, in the stronger colour).")
    return (f"<p class='tlab-runs-said'>{html.escape(said)} {html.escape(REOPEN_SAYS)}</p>"
            f"<div class='tlab-runs-view'>{_column(a, left)}{_column(b, right)}</div>")


def view(runs, picked) -> str:
    """The panel's view for the picked run numbers (the first two picked; one picked: that run alone)."""
    runs = clean(runs)
    wanted = []
    for p in picked if isinstance(picked, (list, tuple)) else []:
        try:
            wanted.append(int(str(p)))
        except ValueError:
            continue
    chosen = [r for r in runs if r["n"] in wanted][:2]
    if not chosen:
        return ("<p class='tlab-runs-said'>No run picked. Each run of this tab is kept here (the last "
                f"{KEEP}); tick two to see them side by side.</p>" if runs else "")
    return side_by_side(*chosen)


def choices(runs) -> list[tuple[str, str]]:
    return [(label(r), str(r["n"])) for r in reversed(clean(runs))]  # the newest first


# ---------------------------------------------------------------- the page
@dataclass
class Panel:
    key: str  # its elements' ids: {key}-runs...
    link: str  # the tab whose link a run carries (links.register's key)
    store: object
    picker: object
    view: object


_PENDING: list[tuple] = []  # (page, track) whose tab had not registered its link yet: wired by `wire`


def panel(key: str, link: str | None = None) -> Panel:
    """The tab's "Your runs" accordion, placed where it is called; `link`: the tab whose link a run
    carries, when it is not `key` (Train's NER column carries the Train tab's link)."""
    with gr.Accordion(f"Your runs (this session's last {KEEP}: tick two to see them side by side)", open=False,
                      elem_id=f"{key}-runs", elem_classes=["tlab-runs"]):
        store = Textbox(value="[]", visible="hidden", elem_id=f"{key}-runs-store", label="runs kept (JSON)")
        picker = CheckboxGroup(choices=[], value=[], label="Runs (newest first)", elem_id=f"{key}-runs-pick")
        shown = gr.HTML("", elem_id=f"{key}-runs-view")  # styled and its links opened by `wire`'s tools
    picker.input(view, [store, picker], [shown], **links.PAGE_ONLY)
    return Panel(key, link or key, store, picker, shown)


SUMMARY_KINDS = (gr.Markdown, gr.Textbox, gr.Plot, gr.Dataframe)  # what a run's summary is read from by default


def outputs_of(event) -> list:
    """The event's outputs a summary can read (text, markdown, plots' notice lines, tables), in order."""
    found = gradio_patches.event_components(event)
    return [b for b in found if isinstance(b, SUMMARY_KINDS) and getattr(b, "visible", True) is not False]


def track(p: Panel, event, parts: list | None = None, title=None) -> None:
    """Record each successful run of `event` in `p`: its link (the tab's registered inputs, as the link bar
    writes them), `title(values by name)` or the inputs that differ from the defaults, and `parts` (default:
    the event's text, markdown, plot and table outputs). Wired now when the tab has registered its link,
    else by `wire`."""
    parts = outputs_of(event) if parts is None else parts
    if p.link in links.registered():
        _track(p, event, parts, title)
    else:
        _PENDING.append((gradio_patches.page_being_built(), (p, event, parts, title)))


def _track(p: Panel, event, parts: list, title) -> None:
    link = links.registered().get(p.link)
    params = link.params if link is not None else []  # a tab without a link: its runs' links open the tab
    defaults = [getattr(q.component, "value", None) for q in params]
    n_parts = len(parts)
    markdown = [not isinstance(c, gr.Textbox) for c in parts]  # a text box's text is kept as it is

    def recorded(store, *values):
        parts_v, inputs = values[:n_parts], list(values[n_parts:])
        query, _ = links.encode(p.link, params, inputs)
        named = (title({q.name: v for q, v in zip(params, inputs)}) if title
                 else title_of(params, inputs, defaults) if params else "")
        runs = record(store, query, named, summary_of(parts_v, markdown))
        picked = [str(r["n"]) for r in runs[-2:]]  # the last two side by side at once
        return json.dumps(runs), gr.update(choices=choices(runs), value=picked), view(runs, picked)

    recorded.__name__ = f"runs_{p.key.replace('-', '_')}"
    lifecycle.after(event, "success", recorded, [p.store, *parts, *[q.component for q in params]],
                    [p.store, p.picker, p.view])


def wire() -> None:
    """Wire the tracks that waited for their tab's link; place the script that opens a link marked
    `tlab-open-here` in this page (runs.js, once per page, with the panels' style; page_query opens it).
    Call once every tab registered its link (app.py)."""
    root = gradio_patches.page_being_built()
    for page, pending in _PENDING:
        if page is root:  # a track of a page built elsewhere (a test's Blocks) is not this page's
            _track(*pending)
    _PENDING.clear()
    gr.HTML("", js_on_load=RUNS_JS, head=f"<style>{RUNS_CSS}</style>", elem_id="tlab-runs-tools", visible="hidden")
