"""Challenges on the page: a section under each tab's chapter line and on each chapter's card in Start.

A section is one gr.HTML (the challenges' goals, answer boxes, Check buttons), drawn here from the backend's
registry and brought to life by one script per page (`tools`, challenges.js): Check calls /check_challenge,
the verdict says why with the model's evidence, "Try it in the tab" opens the helping tab with the answer
loaded (a link opened in this page, like the Start picture's parts), progress stays in this browser
(localStorage, like the first hour's ticks), and a link ?tab=...&challenge=...&answer=... reopens a
challenge with its answer."""

from __future__ import annotations

import html
import json
from pathlib import Path
from urllib.parse import urlencode

import gradio as gr

from backend import challenges as registry
from backend.challenges.contracts import CONTRACTS
from components.shell.endpoint import Endpoint, declare
from components.shell.lanes import LONG_LANE, SHORT_LANE

ASSETS = Path(__file__).resolve().parent / "assets"
JS = (ASSETS / "challenges.js").read_text()
CSS = (ASSETS / "challenges.css").read_text()
MOUNT_JS = ("(window.__tlabChallengeQueue = window.__tlabChallengeQueue || []).push(element); "
            "if (window.__tlabChallengeMount) window.__tlabChallengeMount();")


def list_challenges(chapter: int | None = None) -> list[dict]:
    """Every challenge (or one chapter's): id, chapter, title, goal, answer_format (schema and example), tab
    (the ?tab= key of the tab that helps), try_query (that tab's inputs, "{name}" standing for the answer's
    values) and hint."""
    return registry.challenges(chapter)


def check_challenge(challenge_id: str, answer: str) -> dict:
    """Check one challenge: `answer` is JSON text in the challenge's answer_format. Returns {challenge, passed,
    reason, evidence (the model's outputs), hint, tab, try_query, seconds}; a malformed answer is refused with a
    message naming what is wrong."""
    return registry.check_challenge(challenge_id, answer)


def tools() -> None:
    """Once per page: the sections' script and style, and the two API endpoints the sections call."""
    gr.HTML("", js_on_load=JS.replace("__CSS__", json.dumps(CSS)), elem_id="tlab-challenge-tools", visible="hidden")
    declare(Endpoint("challenges", list_challenges, {}, [], lane=SHORT_LANE, contract=CONTRACTS["challenges"]))
    declare(Endpoint("check_challenge", check_challenge, {}, [], lane=LONG_LANE, contract=CONTRACTS["check_challenge"]))


def main_tab(key: str) -> str:
    """The page's tab that holds a challenge's helping tab (a Pipelines task's sub-tab sits in Pipelines)."""
    return key.split("-")[0]


def for_tab(key: str) -> list[dict]:
    return [c for c in registry.challenges() if main_tab(c["tab"]) == key]


def for_chapter(number: int) -> list[dict]:
    return registry.challenges(number)


def _fields(c: dict) -> str:
    props = c["answer_format"]["properties"]
    said = []
    for name, p in props.items():
        if p["type"] == "string":
            kind = f"text, at most {p['maxLength']} characters"
        elif p["type"] == "integer":
            kind = f"a whole number from {p['minimum']} to {p['maximum']}"
        else:
            kind = f"a list of {p['minItems']}-{p['maxItems']} texts"
        said.append(f"<code>{html.escape(name)}</code>: {html.escape(p['description'])} ({kind})")
    return "; ".join(said)


def _item(c: dict, where: str) -> str:
    example = json.dumps(c["answer_format"]["example"], ensure_ascii=False, indent=1)
    link = "?" + urlencode({"tab": c["tab"], "challenge": c["id"]})
    data = {"id": c["id"], "tab": c["tab"], "try": c["try_query"]}
    return (
        f"<details class='tlab-ch-item' data-ch='{html.escape(json.dumps(data), quote=True)}' "
        f"id='ch-{where}-{c['id']}'>"
        f"<summary><span class='tlab-ch-done' title='solved in this browser'></span> <b>Ch. {c['chapter']} · "
        f"{html.escape(c['title'])}</b>: {html.escape(c['goal'])}</summary>"
        f"<p class='tlab-ch-format'>Answer, as JSON: {_fields(c)}.</p>"
        f"<textarea class='tlab-ch-answer' rows='4' spellcheck='false' aria-label='your answer to "
        f"{html.escape(c['title'])}, as JSON'>{html.escape(example)}</textarea>"
        "<div class='tlab-ch-buttons'><button type='button' class='tlab-ch-check'>Check</button> "
        f"<a class='tlab-ch-try tlab-open-here' href='{html.escape(link, quote=True)}'>Try it in the tab</a> "
        f"<a class='tlab-ch-link' href='{html.escape(link, quote=True)}'>Link to this challenge with its answer</a>"
        "</div><div class='tlab-ch-verdict' role='status' aria-live='polite'></div></details>")


def section(where: str, items: list[dict], title: str = "Challenges") -> gr.HTML | None:
    """The challenges `items` as one section placed where it is called (`where`: a tab key or start-chN)."""
    if not items:
        return None
    body = "".join(_item(c, where) for c in items)
    head = (f"<summary class='tlab-ch-title'><b>{html.escape(title)}</b> · <span class='tlab-ch-count'>0</span> of "
            f"{len(items)} solved in this browser</summary><p class='tlab-ch-about'>Each is a goal to reach with a "
            "tab. Write your answer as JSON and press Check: the app runs the model on it and says why it passed or "
            "not, with the model's own outputs as evidence.</p>")
    return gr.HTML(f"<details class='tlab-ch'>{head}{body}</details>", js_on_load=MOUNT_JS, elem_id=f"challenges-{where}",
                   elem_classes=["tlab-challenges"], padding=False)
