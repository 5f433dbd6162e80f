"""The learner's guide on every tab, placed once per page (app.py), like figures.py's tools:

- the glossary (components/shell/glossary.py) made visible: components/shell/assets/glossary.js underlines each term
  where it appears and shows its definition on hover (desktop) or tap (phone);
- the learner's own wait: components/shell/assets/wait.js times each click of a run button to the result that shows
  the server's figure (`SERVER_FIGURES`) and, when they differ, says so under it.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from components.shell.glossary import patterns

ASSETS = Path(__file__).resolve().parent / "assets"

# How results say the server's own seconds (the seconds in group 1). The model badge writes the first
# (badge.model_time); the others are older words of the Train, NER, Efficiency and Decoding results.
SERVER_FIGURES = (
    r"model time (\d+(?:\.\d+)?) s",
    r"Done in (\d+(?:\.\d+)?) s",
    r"Ran in (\d+(?:\.\d+)?) s",
    r"tokens in (\d+(?:\.\d+)?) s of model time",
)


def _script(name: str, **values) -> str:
    text = (ASSETS / name).read_text()
    for key, value in values.items():
        text = text.replace(f"__{key}__", json.dumps(value))
    return text


def guide_tools() -> gr.HTML:
    """Place once per page: the glossary on hover / tap, and the learner's wait beside the server's time."""
    js = _script("glossary.js", TERMS=patterns()) + "\n" + _script("wait.js", FIGURES=list(SERVER_FIGURES))
    css = (ASSETS / "guide.css").read_text()
    return gr.HTML("", js_on_load=js, head=f"<style>{css}</style>", elem_id="tlab-guide-tools", visible="hidden")
