"""What the Start tab's first-hour steps call: each "Reveal" runs the step's example through the backend
entry point its tab's API uses (the same inputs the step opens the tab with) and writes the card."""

from __future__ import annotations

import threading

import gradio as gr

from backend import anatomy, attention, decoding, pipelines, search, tokenizers
from components.shell import DECODE_LANE, SHORT_LANE
from components.shell.session import session_of
from components.start import route

CARD_HEAD = "**What to look for** (from a run of this step's example on this server): "
# The fixed examples give the same numbers every time on one server: each is run once per process and its
# card kept. The search step is run each time: it searches the visitor's own index, as the Search tab does.
_KEPT: dict[str, tuple[str, dict]] = {}
_KEPT_LOCK = threading.Lock()


def _run(key: str, request: gr.Request | None) -> dict:
    """The step's example, run as its tab runs it (plain data back)."""
    if key == "pipelines":
        return pipelines.classify(route.STEPS[0].query["text"])
    if key == "tokenizers":
        return tokenizers.tokenize(route.TOKENIZE)
    if key == "attention":
        return attention.attention(route.FLIES_A, route.FLIES_B, "encoder")
    if key == "anatomy":
        return anatomy.anatomy(*anatomy.FIRST_EXAMPLE, role="encoder")
    if key == "decoding":
        return decoding.decode(route.PROMPT, {"strategy": "greedy", "max_new_tokens": 16})
    return search.search(session_of(request, "the search tab's index"), route.QUESTION, k=5)


CARDS = {"pipelines": route.classify_card, "tokenizers": route.tokenize_card, "attention": route.attention_card,
         "anatomy": route.anatomy_card, "decoding": route.decoding_card, "search": route.search_card}
LANES = {"decoding": DECODE_LANE}


def reveal(key: str):
    """The handler of one step's Reveal button: (card markdown, what the card found for the Open button); the
    page declares it (components/start/ui.py), which runs it under its request's budget."""

    def go(request: gr.Request = None):
        with _KEPT_LOCK:
            kept = _KEPT.get(key)
        if kept is None:
            kept = CARDS[key](_run(key, request))
            if key != "search":
                with _KEPT_LOCK:
                    _KEPT[key] = kept
        text, extra = kept
        return CARD_HEAD + text, dict(extra)

    go.__name__ = f"start_reveal_{key}"
    return go, LANES.get(key, SHORT_LANE)


def findings(key: str):
    """The handler an Open button runs first when its tab opens at what the card found (the attention step's
    head): the card's findings as they are, or, when the card was never revealed in this page (a reload
    empties it), the Reveal's run, so the tab opens at the head the card names, never at head 0."""
    show, lane = reveal(key)

    def fill(found, request: gr.Request = None):
        if isinstance(found, dict) and found:
            return gr.skip(), gr.skip()
        return show(request)

    fill.__name__ = f"start_findings_{key}"
    return fill, lane
