"""The Why tab's formatting and hand-off plumbing, without a browser: a packed hand-off is unpacked
into the inputs (and nothing else is), QA results say which text a token is from, the empty table
stays hidden until a run, and Pipelines' zero-shot, NER and QA hand off to Why."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from components.why import handlers, plots


def _skipped(update) -> bool:
    return update == gr.skip()


def test_unpack_sets_the_named_inputs_and_empties_the_packed_box():
    value = json.dumps({"text": "The team won.", "labels": "sport, politics", "word": "", "extra": "ignored"})
    out = handlers.unpack(value)
    assert len(out) == len(handlers.HANDED_KEYS) + 1
    got = dict(zip(handlers.HANDED_KEYS, out))
    assert got["text"] == "The team won." and got["labels"] == "sport, politics" and got["word"] == ""
    assert _skipped(got["question"]) and _skipped(got["label"])  # not in the packed value: left as they are
    assert out[-1] == ""


@pytest.mark.parametrize("value", ["not json", "[1, 2]", json.dumps({"text": 3}), "{" + " " * 30_000 + "}"])
def test_unpack_sets_no_input_from_anything_else(value):
    out = handlers.unpack(value)
    assert all(_skipped(u) for u in out[:-1]) and out[-1] == ""


@pytest.mark.parametrize("value", ["", None])
def test_an_empty_packed_box_changes_nothing(value):  # emptying the box fires its change event again
    assert all(_skipped(u) for u in handlers.unpack(value))


def _qa_result() -> dict:
    return {"methods": ["occlusion"], "scores": {"occlusion": [0.5, -0.25, 1.0]},
            "method_words": {"occlusion": "occlusion"},
            "tokens": [{"token": "When", "part": "question"}, {"token": "built", "part": "question"},
                       {"token": "1889", "part": "context"}]}


def test_qa_tokens_say_which_text_they_are_from():
    headers, rows = plots.table_rows(_qa_result())
    assert headers == ["part", "token", "occlusion"]
    assert rows[0] == ["question", "When", 0.5] and rows[2][0] == "context"
    strip = plots.heat_strip(_qa_result())
    assert strip.count("class='why-part'") == 2 and strip.index("question:") < strip.index("context:")
    plain = {**_qa_result(), "tokens": [{"token": t["token"]} for t in _qa_result()["tokens"]]}
    assert plots.table_rows(plain)[0] == ["token", "occlusion"] and "why-part" not in plots.heat_strip(plain)


def test_qa_prediction_line_names_the_span_and_the_readers_verdict():
    p = {"span": {"answer": "in 1889", "chosen": "the reader's answer"},
         "reader": {"no_answer": False, "answer": "in 1889"}}
    assert "span 'in 1889'" in handlers._prediction({"prediction": p})
    p["reader"]["no_answer"] = True
    assert "no answer" in handlers._prediction({"prediction": p})


def test_the_table_is_hidden_until_a_run_and_pipelines_hand_off_to_why():
    from components.pipelines import ui as pipelines_ui
    from components.shell import links
    from components.why import ui as why_ui

    links.reset()
    try:
        with gr.Blocks() as demo:
            with gr.Tabs():
                with gr.Tab("Pipelines", id="pipelines"):
                    pipelines_ui.build()
                with gr.Tab("Why", id="why"):
                    why_ui.build()
        table = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "why-table")
        assert table.visible is False and table.headers == ["token"]  # no placeholder "1 2 3" columns
        handoffs = {h.query.get("task"): h for h in links._HANDOFFS if h.query.get("tab") == "why"}
        assert handoffs["zero_shot"].param == handoffs["ner"].param == "handed"
        start = json.loads(handoffs["zero_shot"].source.value)
        assert start["text"] and start["labels"] and start["word"] == "" and start["label"] == ""
        assert json.loads(handoffs["ner"].source.value)["labels"] == ""
        qa = json.loads(handoffs["qa"].source.value)  # the context as the text, and the question
        assert handoffs["qa"].param == "handed" and qa["text"] and qa["question"].endswith("?") and qa["labels"] == ""
        # what the hand-off does on a click: the task set, the packed value into the hidden box
        key, values, _ = links.decode({"tab": "why", "task": "zero_shot", "handed": handoffs["zero_shot"].source.value})
        assert key == "why" and values["task"] == "zero_shot" and json.loads(values["handed"]) == start
    finally:
        links.reset()
