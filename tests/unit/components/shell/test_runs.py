"""Runs kept side by side (components/shell/runs.py): the summary, the title, the word diff, the kept
list a stranger may send back, and the wiring a tab gets from `panel` + `track`."""

from __future__ import annotations

import json
from types import SimpleNamespace
from urllib.parse import parse_qsl

import gradio as gr
import pandas as pd
import pytest

from components.shell import lifecycle, links, notice, page_query, runs


def test_the_word_diff_marks_only_the_words_that_differ_and_numbers_apart():
    left, right = runs.word_diff("Transformers are the best\nlog-prob -3.20 · 8 tokens",
                                 "Transformers are the worst\nlog-prob -4.75 · 8 tokens")
    assert "".join(t for t, _ in left) == "Transformers are the best\nlog-prob -3.20 · 8 tokens"  # nothing lost
    assert [(t.strip(), k) for t, k in left if k != "same"] == [("best", "changed"), ("-3.20", "number")]
    assert [(t.strip(), k) for t, k in right if k != "same"] == [("worst", "changed"), ("-4.75", "number")]
    same, _ = runs.word_diff("one two 3", "one two 3")
    assert same == [("one two 3", "same")]
    # a word only one side has is marked on that side alone
    left, right = runs.word_diff("a b c", "a c")
    assert [k for _, k in left] == ["same", "changed", "same"] and all(k == "same" for _, k in right)


def test_the_view_puts_two_runs_side_by_side_escaped_with_their_links():
    kept = runs.record([], "tab=decoding&seed=1", "seed 1", "the <b>cat</b> sat 0.5", now=0)
    kept = runs.record(kept, "tab=decoding&seed=2&x='><script>", "seed 2", "the dog sat 0.7", now=60)
    html = runs.view(kept, ["2", "1"])
    assert html.count("class='tlab-run'") == 2 and html.index("data-run='1'") < html.index("data-run='2'")
    assert "<b>cat</b>" not in html and "&lt;b&gt;cat&lt;/b&gt;" in html
    assert "<script>" not in html and "href='?tab=decoding&amp;seed=2&amp;x=&#x27;&gt;&lt;script&gt;'" in html
    assert "<mark class='tlab-run-number'>0.5</mark>" in html and "<mark class='tlab-run-number'>0.7</mark>" in html
    assert "run 1 · 00:00:00 server clock · seed 1" in html and "run 2 · 00:01:00 server clock · seed 2" in html
    alone = runs.view(kept, ["1"])
    assert alone.count("class='tlab-run'") == 1 and "<mark" not in alone
    assert "tick two" in runs.view(kept, []) and runs.view([], []) == ""
    assert "same word for word" in runs.side_by_side(kept[0], {**kept[0], "n": 9})
    # reopening restores a run's inputs, not its result, and the panel says so (link, title and the line above)
    for shown in (html, alone):
        assert "Reopen this run's inputs</a>" in shown and "its result is not kept: run it again" in shown
        assert "title='Reopening puts this run&#x27;s inputs back" in shown


def test_the_kept_list_is_bounded_and_a_strangers_list_is_cleaned():
    kept = []
    for i in range(12):
        kept = runs.record(kept, f"tab=x&i={i}", f"t{i}", "s" * 5000, now=i)
    assert [r["n"] for r in kept] == list(range(5, 13)) and len(kept) == runs.KEEP
    assert all(len(r["summary"]) == runs.SUMMARY_MAX for r in kept)
    assert runs.choices(kept)[0] == (runs.label(kept[-1]), "12")  # the newest first
    junk = [{"n": True, "t": 0, "query": "", "title": "", "summary": ""}, {"n": 1, "t": "x"}, 7, None,
            {"n": 3, "t": 1.0, "query": "q", "title": "x" * 500, "summary": ["no"]},
            {"n": 4, "t": 2, "query": "q" * 99_999, "title": "x" * 500, "summary": "ok"}]
    assert [(r["n"], len(r["query"]), len(r["title"])) for r in runs.clean(junk)] == [(4, runs.QUERY_MAX, runs.TITLE_MAX)]
    assert runs.clean({"a": [1]}) == runs.clean(12345) == runs.clean("xxxxx") == runs.clean("[" * 99_999) == []
    assert runs.clean(json.dumps(kept)) == kept and runs.clean(" " * (runs.STORE_MAX + 1)) == []
    assert runs.record({"a": [1]}, "q", "t", "s", now=0)[0]["n"] == 1
    assert runs.view("xxxxx", 12345) == ""
    # a time the clock cannot show is dropped (NaN, infinity and 1e300 parse from a crafted store)
    crafted = '[' + ",".join(f'{{"n": {i + 1}, "t": {t}, "query": "q", "title": "t", "summary": "s"}}'
                             for i, t in enumerate(["NaN", "Infinity", "1e300", "-5", "true", "60"])) + ']'
    assert [r["n"] for r in runs.clean(crafted)] == [6]
    assert "run 6 · 00:01:00 server clock" in runs.view(runs.clean(crafted), ["6"])


def test_the_summary_reads_text_markdown_a_plots_notice_and_a_table():
    fig = notice(__import__("plotly.graph_objects", fromlist=["Figure"]).Figure(), "Head 3 matters **most**.")
    plot = SimpleNamespace(plot=fig.to_json())
    table = pd.DataFrame({"token": ["a", "b"], "p": [0.5, 0.25]})
    text = runs.summary_of(["Generated text", "**greedy** · log-prob \\-3.2 · *model time 0.20 s*", None, "", plot,
                            table, 12345, {"a": [1]}])
    assert text.splitlines() == ["Generated text", "greedy · log-prob -3.2 · model time 0.20 s",
                                 "What to notice: Head 3 matters most.", "token | p", "a | 0.5", "b | 0.25"]
    assert runs.summary_of([SimpleNamespace(plot="not json")]) == ""
    assert runs.summary_of(["spec `L3H*=0` is *not* **bold**"]) == "spec L3H*=0 is not bold"
    html = "<style>.x{color:red}</style><ol><li><b>Doc 1</b> 0.83</li>\n\n<li>Doc 2 0.71</li></ol> a \\<b\\> b"
    assert runs.summary_of([html]) == "Doc 1 0.83\nDoc 2 0.71 a <b> b"
    # a text box's text (a generation) is kept as it is, markdown read as words
    assert runs.summary_of([" a **b** <i>c</i>  d ", "**e**"], [False, True]) == "a **b** <i>c</i>  d\ne"


def test_the_summary_keeps_comparisons_escaped_punctuation_and_entities_as_written():
    from components.shell.errors import md_text
    said = ("The student keeps **96.8%** (target: >= 95% at < 0.5x: met).\n"
            "ONNX int8 is **3.1x** (target >= 3x: met).\n" + md_text("Fastest: ONNX int8 -> 4.2 ms") + "\n"
            + md_text("fill-mask: no local masked LM: reranked") + "\n" + md_text("a <b> tag & 1 < 2"))
    assert runs.summary_of([said]).splitlines() == [
        "The student keeps 96.8% (target: >= 95% at < 0.5x: met).", "ONNX int8 is 3.1x (target >= 3x: met).",
        "Fastest: ONNX int8 -> 4.2 ms", "fill-mask: no local masked LM: reranked", "a <b> tag & 1 < 2"]
    assert runs.summary_of(["x <span class='a'>y</span> <br/> z <!-- c --> w"]) == "x y z w"


def test_the_title_names_what_the_run_set():
    with gr.Blocks():
        params = [links.param_for("prompt", gr.Textbox(value="Transformers are the")),
                  links.param_for("strategy", gr.Radio(["greedy", "sample"], value="greedy")),
                  links.param_for("seed", gr.Textbox(value=""))]
    defaults = ["Transformers are the", "greedy", ""]
    assert runs.title_of(params, ["Transformers are the", "sample", "7"], defaults) == "strategy sample · seed 7"
    assert runs.title_of(params, defaults, defaults) == "defaults"
    assert runs.title_of(params, ["a long prompt " * 9, "greedy", ""], defaults).startswith("prompt a long prompt a long ")
    assert runs.title_of(params, ["The weather", "sample", "7"], defaults) == "strategy sample · seed 7 · prompt The weather"
    assert len(runs.title_of(params, ["x" * 999, "sample", "1" * 99], defaults)) <= runs.TITLE_MAX


@pytest.fixture()
def tab():
    """A tab with a link, a run button, and its runs panel, built as a tab builds them."""
    links.reset()
    with gr.Blocks() as demo:
        with gr.Tabs() as tabs:
            with gr.Tab("Demo", id="demo"):
                prompt = gr.Textbox(value="hello")
                seed = gr.Textbox(value="")
                go = gr.Button("Run")
                out = gr.Textbox()
                bar = links.bar("demo")
                kept = runs.panel("demo")
                ev = go.click(lambda p, s: f"{p} {s}", [prompt, seed], out)
                links.register("demo", {"prompt": prompt, "seed": seed}, [ev], bar)
                runs.track(kept, ev, [out])
            with gr.Tab("Other", id="other"):
                links.register("other", {"text": gr.Textbox(value="")}, ())
        links.known_tabs(["demo", "other", "start"])
        runs.wire()
        lifecycle.wire()  # as app.py does once every tab is built
        page_query.wire(demo, tabs)
    yield demo, kept, prompt, seed
    links.reset()


def _jobs(demo):
    """Every function the page runs: each handler, and each job a life-cycle handler folds (shell.lifecycle)."""
    for b in demo.fns.values():
        yield b.fn
        yield from (p.fn for p in getattr(b.fn, "parts", ()))


def _fn(demo, name):
    return next(f for f in _jobs(demo) if getattr(f, "__name__", "") == name)


def test_a_tracked_run_is_recorded_with_its_link_and_the_last_two_picked(tab):
    demo, kept, *_ = tab
    recorded = _fn(demo, "runs_demo")
    store, picker, html = recorded("[]", "hello 1", "hello", "1")
    store = json.loads(store)  # the page keeps it as JSON text
    assert dict(parse_qsl(store[0]["query"])) == {"tab": "demo", "prompt": "hello", "seed": "1"}
    assert store[0]["title"] == "seed 1" and store[0]["summary"] == "hello 1"
    assert picker["value"] == ["1"] and "Reopen this run" in html
    store, picker, html = recorded(json.dumps(store), "hello 2", "hello", "2")
    store = json.loads(store)
    assert picker["value"] == ["1", "2"] and [c[1] for c in picker["choices"]] == ["2", "1"]
    assert "<mark class='tlab-run-number'>1</mark>" in html and "<mark class='tlab-run-number'>2</mark>" in html
    # the event is wired after the run's success, private, off the queue
    dep = next(d for d in demo.config["dependencies"] if d.get("id") is not None
               and any(p.fn is recorded for p in getattr(demo.fns[d["id"]].fn, "parts", ())))
    assert dep["api_visibility"] == "private" and dep["queue"] is False and dep["trigger_only_on_success"]


def test_a_runs_link_reopens_its_inputs_through_the_links_path(tab):
    demo, kept, prompt, seed = tab
    out = links.outputs(next(b for b in demo.blocks.values() if isinstance(b, gr.Tabs)))
    updates = page_query.restore("?tab=demo&prompt=again&seed=42&reopened=123")
    by = {id(c): u for c, u in zip(out, updates)}
    assert by[id(prompt)]["value"] == "again" and by[id(seed)]["value"] == "42"
    assert "Reopened from your runs." in by[id(links.registered()["demo"].bar)]
    opened = dict(zip(map(id, out), page_query.restore("tab=demo&prompt=x&opened=5")))  # the Start picture's parts
    assert "Opened from this page." in opened[id(links.registered()["demo"].bar)]
    assert len(updates) == len(out)
    hostile = page_query.restore({"a": [1]})  # nothing opens, nothing breaks
    assert len(hostile) == len(out)


def test_a_link_opened_in_the_page_goes_through_one_box_whose_open_has_no_progress_targets(tab):
    """A link opened in the page (a kept run, the Start picture, the page's own address) goes into one
    hidden box; its open sets what a restore sets, and leaves the page no loading status to keep for the
    ~150 outputs it may set (Gradio's page re-applies those on every later status message of any run)."""
    demo, kept, prompt, seed = tab
    tabs = next(b for b in demo.blocks.values() if isinstance(b, gr.Tabs))
    box = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == page_query.BOX_ID)
    deps = demo.config["dependencies"]
    opens = [d for d in deps if getattr(demo.fns[d["id"]].fn, "__name__", "") == "restore"]
    assert len(opens) == 1
    opened = opens[0]
    assert opened["outputs"] == [c._id for c in links.outputs(tabs)] and opened["show_progress_on"] == []
    assert [tuple(t) for t in opened["targets"]] == [(box._id, "change")]  # no holders here: the box's change opens
    loads = [d for d in deps if d["targets"] and d["targets"][0][1] == "load" and d["outputs"] == [box._id]]
    assert len(loads) == 1 and page_query.BOX_ID in loads[0]["js"]  # the page sends its own address into it
    ready = [d for d in deps if d.get("trigger_after") == opened["id"]]
    assert ready and "__tlabReady = true" in ready[0]["js"]  # ready once the open is done


def test_a_tab_without_a_link_keeps_its_runs_and_their_links_open_the_tab():
    links.reset()
    with gr.Blocks() as demo:
        with gr.Tabs():
            with gr.Tab("Plain", id="plain"):
                go, out = gr.Button("Train"), gr.Markdown()
                ev = go.click(lambda: "**trained** 3 steps", None, out)
                runs.track(runs.panel("plain-gpt", link="plain"), ev)  # parts: the event's markdown output
            links.known_tabs(["plain"])
            assert not [f for f in _jobs(demo) if getattr(f, "__name__", "") == "runs_plain_gpt"]
            assert lifecycle.pending() == 0  # nothing recorded before runs.wire
        runs.wire()  # waits for a link that never comes, then keeps the runs anyway
        lifecycle.wire()
    recorded = _fn(demo, "runs_plain_gpt")
    store, _, html = recorded("not json", "**trained** 3 steps")
    store = json.loads(store)
    assert store[0]["query"] == "tab=plain" and store[0]["title"] == "" and store[0]["summary"] == "trained 3 steps"
    assert runs.label(store[0]).endswith("server clock")
    links.reset()


def test_opening_a_link_here_first_empties_the_opened_tabs_hidden_holders():
    links.reset()
    with gr.Blocks():
        mine, other = gr.Textbox(visible="hidden"), gr.Textbox(visible="hidden")
        shown = gr.Textbox()
        links.register("demo", {"seed": mine, "prompt": shown}, ())
        links.register("other", {"packed": other}, ())
    held = page_query.holders()
    assert held == [("demo", mine), ("other", other)]  # the visible box is no holder
    empty = page_query.emptied(held)
    out = empty("tab=demo&seed=7&reopened=1")
    assert out[0] == "" and out[1] == gr.skip()
    assert all(o == gr.skip() for o in empty({"a": [1]}))
    assert page_query.emptied(held[:1])("tab=demo") == ""  # one output: the value itself
    links.reset()
