"""The course map and the link registry: plain data checked without a browser."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

import gradio as gr
import pytest

from components.shell import course
from components.shell import links, page_query

NOTEBOOK = re.compile(r"^(0[1-9]|1[01])_[a-z]+(-[a-z]+)*\.ipynb$")


def _tab_keys() -> set[str]:
    import app

    return {key for _, _, key, _ in app.TABS}


def test_every_chapter_names_real_tabs_and_a_notebook_of_the_repository_pattern():
    keys = _tab_keys()
    assert [c.number for c in course.CHAPTERS] == list(range(1, 12))
    for c in course.CHAPTERS:
        assert set(c.tabs) <= keys, (c.number, c.tabs)
        assert NOTEBOOK.match(c.notebook) and c.notebook.startswith(f"{c.number:02d}_"), c.notebook
        assert c.notebook_url.startswith("https://github.com/nlp-with-transformers/notebooks/blob/main/")
        if c.try_query:  # a Try button opens one of the chapter's own tabs (or a task inside it)
            assert c.try_query["tab"].split("-", 1)[0] in c.tabs and c.try_label
        else:
            assert c.gap, f"chapter {c.number} has no tab: it must say so"
    assert {tab for tab, _ in course.FIRST_HOUR} <= keys


def test_every_tab_but_none_unnamed_gets_a_chapter_header():
    for key in _tab_keys():
        header = course.header_markdown(key)
        assert header.startswith("**Book:** ch. "), key
        assert "notebooks/blob/main/" in header
    assert course.header_markdown("no-such-tab") == ""


@pytest.fixture()
def registry():
    links.reset()
    with gr.Blocks():
        text = gr.Textbox()
        role = gr.Radio(["encoder", "decoder"], value="encoder")
        layer = gr.Slider(0, 5, step=1)
        temp = gr.Slider(0, 3, step=0.05)
        flag = gr.Checkbox()
        idx = gr.Number(precision=0)
        bar = links.bar("demo")
        links.register("demo", {"text": text, "role": role, "layer": (layer, 0, 99), "temp": temp,
                                "flag": flag, "idx": idx}, (), bar)
    links.known_tabs(["start", "demo", "other"])
    yield links.registered()["demo"]
    links.reset()


def test_a_link_round_trips_its_values(registry):
    query, omitted = links.encode("demo", registry.params, ["time flies & <b>", "decoder", 7, 0.7, True, -1])
    assert omitted == []
    key, values, left = links.decode(dict(parse_qsl(query)))
    assert key == "demo" and left == []
    assert values == {"text": "time flies & <b>", "role": "decoder", "layer": 7, "temp": 0.7, "flag": True, "idx": -1}


def test_a_text_too_long_for_a_url_is_left_out_and_said(registry):
    query, omitted = links.encode("demo", registry.params, ["x" * (links.MAX_TEXT + 1), "encoder", 0, 1, False, 0])
    assert omitted == ["text"] and "xxx" not in query
    key, values, left = links.decode(dict(parse_qsl(query)))
    assert "text" not in values and left == ["text"]
    assert "Left out of the link" in links.bar_html(query, omitted)


def test_a_hostile_query_is_clipped_ignored_and_escaped(registry):
    hostile = {"tab": "demo", "text": "<img src=x onerror=alert(1)>" * 100, "role": "<script>", "layer": "1e99",
               "temp": "nan", "flag": "maybe", "idx": "-inf", "__proto__": "x", "omitted": "text,<i>"}
    key, values, left = links.decode(hostile)
    assert key == "demo"
    assert len(values["text"]) == links.MAX_TEXT
    assert values["layer"] == 99  # clipped to the range the link allows
    assert "role" not in values and "temp" not in values and "flag" not in values and "idx" not in values
    assert left == ["text"]
    query, _ = links.encode("demo", registry.params, [values.get(p.name) for p in registry.params])
    page = links.bar_html(query, left)
    assert "<img" not in page and "<script" not in page and "onerror=alert" not in page.replace("onerror%3D", "")
    assert links.decode({"tab": "<script>"}) == (None, {}, [])
    assert links.decode({"tab": "other"}) == ("other", {}, [])  # a known tab without inputs just opens
    assert links.decode({"tab": ["demo"]}) == (None, {}, [])


@pytest.mark.parametrize("query", ["", "?", "?tab=demo&text=hi%20there&layer=4", "tab=demo&text=a&text=b",
                                   "?tab=demo&text=&flag=true&omitted=text", "?tab=demo&text=" + "x%26" * 9000,
                                   "?tab=%3Cscript%3E&layer=1e99"])
def test_the_page_sent_query_restores_as_the_address_read_by_the_server_would(registry, query):
    """The page sends its own query string (page_query.QUERY_JS) instead of the load event reading the
    request's: read the same way (Starlette's QueryParams: blank values kept, the last repeat wins)."""
    from starlette.datastructures import QueryParams

    served = dict(QueryParams(query.lstrip("?")[:links.QUERY_MAX]))
    assert page_query.restore(query) == links.updates(*links.decode(served))
    assert page_query.restore(None) == links.updates(None, {}, [])


def test_updates_select_the_tab_and_set_only_its_inputs(registry):
    out = links.updates("demo", {"text": "hi", "layer": 42}, [])
    assert out[0].get("selected") == "demo"
    text_update, layer_update = out[1], out[3]
    assert text_update["value"] == "hi"
    assert layer_update["value"] == 42 and layer_update["maximum"] == 42  # the slider widens to hold it
    assert out[2] == gr.skip()  # role: not in the link, left as it is
    assert "tlab-link-a" in out[-1]
    nothing = links.updates(None, {}, [])
    assert all(u == gr.skip() for u in nothing)


def test_step_by_step_heatmaps_are_labelled_by_token_not_index():
    from components.attention import plots as attention_plots

    tokens = ["[CLS]", "time", "flies", "[SEP]"]
    mats = [{"name": "Q", "shape": [4, 2], "data": [[0.1, 0.2]] * 4, "what": "queries"},
            {"name": "weights", "shape": [4, 4], "data": [[0.25] * 4] * 4, "what": "softmax"}]
    fig = attention_plots.math_matrices({"matrices": mats, "layer": 0, "head": 0, "head_dim": 2, "tokens": tokens})
    assert list(fig.layout.yaxis.ticktext) == ["0: [CLS]", "1: time", "2: flies", "3: [SEP]"]
    assert list(fig.layout.xaxis2.ticktext) == list(fig.layout.yaxis2.ticktext)  # T x T: keys by token too
    assert fig.layout.xaxis.ticktext is None  # Q's columns are dimensions, not tokens


def test_a_sub_tab_link_selects_its_main_tab_and_its_task():
    """Pipelines' tasks: ?tab=pipelines-ner selects the Pipelines tab, then the NER task in it."""
    links.reset()
    with gr.Blocks():
        with gr.Tabs() as main:
            with gr.Tab("Pipelines", id="pipelines"):
                with gr.Tabs() as tasks:
                    with gr.Tab("NER", id="pipelines-ner"):
                        text = gr.Textbox()
                        bar = links.bar("pipelines-ner")
                    with gr.Tab("QA", id="pipelines-qa"):
                        question = gr.Textbox()
        links.register("pipelines-ner", {"text": text}, (), bar, parent="pipelines", subtabs=tasks)
        links.register("pipelines-qa", {"question": question}, (), None, parent="pipelines", subtabs=tasks)
    links.known_tabs(["start", "pipelines"])
    try:
        out = links.outputs(main)
        assert out[:2] == [main, tasks] and out.count(tasks) == 1  # the task group once, however many tasks
        up = links.updates(*links.decode({"tab": "pipelines-ner", "text": "Angela Merkel"}))
        assert len(up) == len(out)
        assert up[0]["selected"] == "pipelines" and up[1]["selected"] == "pipelines-ner"
        assert up[2]["value"] == "Angela Merkel"
        # A main tab's link leaves the task group as it is.
        up = links.updates(*links.decode({"tab": "pipelines"}))
        assert up[0]["selected"] == "pipelines" and up[1] is not None and "selected" not in (up[1] or {})
    finally:
        links.reset()


def test_an_open_with_a_fixed_tab_lists_only_that_tabs_outputs_and_sets_the_same(caplog):
    """Hand-offs and Start buttons open one known tab: their handlers list that tab's outputs (and the
    tab groups), not every tab's, and set exactly what the full list would have set."""
    links.reset()
    with gr.Blocks():
        with gr.Tabs() as tabs:
            with gr.Tab("a", id="a"):
                a_text, a_bar = gr.Textbox(), links.bar("a")
            with gr.Tab("b", id="b"):
                b_text, b_bar = gr.Textbox(), links.bar("b")
        links.register("a", {"text": a_text}, (), a_bar)
        links.register("b", {"text": b_text}, (), b_bar)
    links.known_tabs(["start", "a", "b"])
    try:
        out, cut = links.narrowed(tabs, {"tab": "b"})
        assert out == [tabs, b_text, b_bar]
        full = links.updates("b", {"text": "hi"}, [])
        every = links.outputs(tabs)
        assert cut(full) == [full[every.index(c)] for c in out]
        assert cut(full)[0].get("selected") == "b" and cut(full)[1]["value"] == "hi"
        assert not [r for r in caplog.records if r.name == "tlab.links"]
        cut(links.updates("a", {"text": "elsewhere"}, []))  # an open of another tab through it: said
        assert [r for r in caplog.records if r.name == "tlab.links" and r.levelname == "ERROR"]
    finally:
        links.reset()


def test_a_reopened_train_link_blanks_both_tasks_results_and_code_views():
    """The Train tab declares its link apart (declare_link: one link for both tasks); reopening it (a kept run's
    link, a hand-off) must blank the old run and the code written from it, as every Endpoint's link does."""
    import app

    links.reset()
    try:
        app.build_app(["train"])
        blanked = {getattr(c, "elem_id", None) for c in links.registered()["train"].results}
    finally:
        links.reset()
    for task in ("train", "train-ner"):
        assert {f"{task}-status", f"{task}-summary", f"{task}-json", f"{task}-code-python", f"{task}-code-client",
                f"{task}-code-notebook"} <= blanked, (task, sorted(map(str, blanked)))
    assert {"train-confusion", "train-curve", "train-ner-scores", "train-ner-bars"} <= blanked
    assert not {"train-dataset", "train-epochs", "train-ner-epochs", "train-text"} & blanked  # inputs stay
