"""The Start tab's first hour (components/start): an Open button whose tab opens at what the card found (the
attention step's layer and head) gets those findings even when the card was never revealed in this page (a
reloaded page has an empty card: it opened Attention at head 0, not at the head the card names)."""

from __future__ import annotations

import gradio as gr

from components.start import handlers, route


def test_an_open_without_a_revealed_card_runs_the_reveal_first(monkeypatch):
    ran = []
    monkeypatch.setattr(handlers, "_run", lambda key, request: ran.append(key) or {})
    monkeypatch.setitem(handlers.CARDS, "attention", lambda r: ("In layer 3, head 7 ...", {"layer": 3, "head": 7}))
    monkeypatch.setattr(handlers, "_KEPT", {})
    fill, _ = handlers.findings("attention")
    card, found = fill({})  # a reloaded page: no findings kept
    assert ran == ["attention"] and found == {"layer": 3, "head": 7} and "layer 3, head 7" in card
    opened = route.open_query(route.STEPS[2], found)
    assert (opened["tab"], opened["layer"], opened["head"]) == ("attention", "3", "7")
    kept = fill({"layer": 3, "head": 7})  # revealed before: nothing run again
    assert ran == ["attention"] and all(isinstance(x, dict) and x.get("__type__") == "update" for x in kept)


def test_the_attention_steps_open_button_fills_the_findings_before_it_opens_the_tab():
    from components.attention import ui as attention
    from components.shell import links
    from components.start import ui as start

    links.reset()
    links.known_tabs(["start", "attention"])
    with gr.Blocks() as demo:
        with gr.Tabs() as tabs:
            with gr.Tab("Start", id="start"):
                buttons = start.build({"attention": "Attention"})
            with gr.Tab("Attention", id="attention"):
                attention.build()
        start.wire([b for b in buttons if len(b) == 4 and b[1].key in route.FINDS], tabs)
    names = {i: getattr(fn.fn, "__name__", "") for i, fn in demo.fns.items()}
    fill = next(i for i, n in names.items() if n == "start_findings_attention")
    opened = next(i for i, n in names.items() if n == "start_step_attention")
    assert demo.fns[opened].trigger_after == fill and demo.fns[opened].trigger_only_on_success
