"""The shell's guide, server side: the server's figures the page times the learner's wait against are the
words the results really write; a Decoding link carries the seed a sampled run used; the Start route's
cards are written from the numbers they are given."""

from __future__ import annotations

import re

import gradio as gr

from components.decoding import handlers as decoding
from components.decoding.tables import stats_markdown
from components.shell import model_badge
from components.shell.guide import SERVER_FIGURES, guide_tools
from components.start import route
from components.train.ui import done_line


def _figure(text: str) -> float | None:
    for source in SERVER_FIGURES:
        m = re.search(source, text)
        if m:
            return float(m.group(1))
    return None


def test_the_badge_and_the_decoding_stats_write_a_figure_the_page_reads():
    badge = model_badge({"checkpoint": "m", "source": "package"}, 0.4567)
    assert "model time 0.46 s" in badge and _figure(badge) == 0.46
    assert _figure(model_badge({"checkpoint": "m", "source": "package"})) is None  # no seconds: nothing to compare
    result = {"label": "greedy", "sequence_logprob": -3.0, "perplexity": 1.5, "distinct_2": 1.0, "distinct_3": 1.0,
              "n_new_tokens": 8, "generate_seconds": 1.234, "tokens_per_s": 6.5, "finish_reason": "length",
              "settings": {"strategy": "greedy"}, "warnings": []}
    assert _figure(stats_markdown(result)) == 1.23
    assert _figure("Done in 90.4 s.") == 90.4 and _figure("the model ran fast") is None
    # every shown server time is labelled the model's (Train, NER, Efficiency, Why, scratch, the sweep)
    assert _figure(done_line({"seconds": 90.4})) == 90.4 and done_line({"seconds": 90.4}).startswith("Done: model time")


def test_no_result_writes_server_seconds_in_the_old_unlabelled_words():
    """'Done in 90.4 s' read as the learner's wait (it was the model's: the wait was 261.6 s)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[4] / "components"
    old = re.compile(r"(?:Done in|Ran in) \{|(?:in|took) \*\*\{[^}]*seconds")
    found = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if old.search(line)]
    assert found == []


def test_the_page_script_is_given_the_glossary_and_the_figures():
    tools = guide_tools()
    js = tools.js_on_load
    assert "__TERMS__" not in js and "__FIGURES__" not in js
    assert '"perplexity"' in js and "model time" in js and "<style>" in tools.head


def test_a_sampled_run_links_the_seed_it_drew_and_a_link_puts_it_in_the_box():
    data = {"settings": {"strategy": "sample", "seed": 2132364496}}
    assert decoding.seed_used(data) == "2132364496"
    assert decoding.seed_used({"settings": {"strategy": "greedy", "seed": None}}) == ""
    # the run's own write of the holder leaves the seed box alone (empty stays empty: a new draw next time)
    assert decoding.seed_from_link("2132364496", {"link_seed": "2132364496"}) == gr.skip()
    assert decoding.seed_from_link("7", None) == "7"  # a link opened: its seed goes into the box
    assert decoding.seed_from_link("7", {"link_seed": "2132364496"}) == "7"
    assert decoding.seed_from_link("", None) == gr.skip() and decoding.seed_from_link(None, None) == gr.skip()


def test_the_attention_card_finds_the_head_from_the_weights_it_is_given():
    tokens = ["[CLS]", "time", "flies", "like", "[SEP]", "fruit", "flies", "like", "[SEP]"]
    t = len(tokens)
    flat = [[1 / t] * t for _ in range(t)]
    sharp = [row[:] for row in flat]
    sharp[2] = [0.0] * t
    sharp[2][1] = 0.9
    sharp[2][2] = 0.1
    sharp[6] = [0.0] * t
    sharp[6][5] = 0.8
    sharp[6][6] = 0.2
    payload = {"tokens": tokens, "sentence_b_start": 5, "layers": [0, 1], "attention": [[flat, flat], [flat, sharp]]}
    found = route.flies_head(payload)
    assert (found["layer"], found["head"], found["weight_a"], found["weight_b"]) == (1, 1, 0.9, 0.8)
    text, extra = route.attention_card({"payload": payload})
    assert "layer 1, head 1" in text and "0.900" in text and "0.800" in text and extra == {"layer": 1, "head": 1}
    opened = route.open_query(route.STEPS[2], extra)
    assert opened["text"] == route.FLIES_A and opened["text_b"] == route.FLIES_B and opened["layer"] == "1"
