"""A file argument given as a URL: Gradio would try to fetch it and answer "Hostname 127.0.0.1 failed
validation", naming no argument. The guard refuses it before anything is fetched and says
which argument and what it takes (a server path, refused by Gradio once the app runs, is named too:
tests/fuzz/test_every_handler.py)."""

from __future__ import annotations

import asyncio

import gradio as gr
import pytest

from components.shell.guard import guard

pytestmark = pytest.mark.unit

META = {"_type": "gradio.FileData"}


def _demo():
    def handler(text, upload):
        return text

    with gr.Blocks() as demo:
        text, upload, out = gr.Textbox(), gr.File(), gr.Textbox()
        gr.Button().click(handler, [text, upload], out, api_name="take_file")
    guard(demo)
    return demo, next(iter(demo.fns.values()))


@pytest.mark.parametrize("url", ["http://127.0.0.1:7860/secret", "https://example.org/data.csv", " HTTP://x/y"])
def test_a_url_as_a_file_is_refused_by_name_before_any_fetch(url):
    demo, block_fn = _demo()
    with pytest.raises(gr.Error) as err:
        asyncio.run(demo.preprocess_data(block_fn, ["hi", {"path": url, "meta": META}], None))
    message = str(err.value.message)
    assert "upload (argument 2)" in message and "a URL was given" in message
    assert "failed validation" not in message and "127.0.0.1" not in message


def test_no_file_passes():
    demo, block_fn = _demo()
    assert asyncio.run(demo.preprocess_data(block_fn, ["hi", None], None)) == ["hi", None]


@pytest.mark.parametrize("junk", [12345, "xxxxx", {"a": [1]}])
def test_a_plot_or_a_table_of_the_wrong_shape_is_named_not_pydantics_words(junk):
    def handler(text, plot, table):
        return text

    with gr.Blocks() as demo:
        text, plot, table, out = gr.Textbox(), gr.Plot(), gr.Dataframe(), gr.Textbox()
        gr.Button().click(handler, [text, plot, table], out)
    guard(demo)
    block_fn = next(iter(demo.fns.values()))
    with pytest.raises(gr.Error) as err:
        asyncio.run(demo.preprocess_data(block_fn, ["hi", junk, None], None))
    message = str(err.value.message)
    assert "argument 2, a plot" in message and "validation error" not in message and "PlotData" not in message
    with pytest.raises(gr.Error) as err:
        asyncio.run(demo.preprocess_data(block_fn, ["hi", None, junk], None))
    assert "argument 3, a dataframe" in str(err.value.message)
