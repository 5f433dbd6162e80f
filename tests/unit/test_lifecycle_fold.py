"""The result life cycle folded into one handler per outcome (components/shell/lifecycle.py): the jobs a
run's success or failure starts (error box, link bar, kept runs, a tab's notice) run in one round trip,
and together do what their separate handlers did."""

from __future__ import annotations

import collections

import gradio as gr
import pytest

from components.shell import lifecycle


@pytest.fixture(autouse=True)
def _clean():
    lifecycle.reset()
    yield
    lifecycle.reset()


def test_parts_share_inputs_and_outputs_and_a_shared_output_gets_every_word():
    with gr.Blocks():
        a, b, shared = gr.Textbox(), gr.Textbox(), gr.Dataframe()
    parts = [lifecycle.Part(lambda x: (x.upper(), None), [a], [b, shared]),  # blanks the table
             lifecycle.Part(lambda x, y: gr.update(visible=False), [a, b], [shared]),  # hides it
             lifecycle.Part(lambda: gr.skip(), [], [b])]  # leaves b to the first part
    run, inputs, outputs = lifecycle.folded(parts)
    assert inputs == [a, b] and outputs == [b, shared]  # each block once, in order
    out = run(None, "hi", "old")
    assert out[0] == "HI"
    assert out[1] == {"__type__": "update", "visible": False, "value": None}  # blanked and hidden


def test_a_part_that_raises_leaves_its_outputs_and_the_others_still_apply(caplog):
    with gr.Blocks():
        a, b = gr.Textbox(), gr.Textbox()

    def broken():
        raise RuntimeError("a bug in one job")

    run, _, outputs = lifecycle.folded([lifecycle.Part(broken, [], [a]), lifecycle.Part(lambda: "kept", [], [b])])
    out = run(None)
    assert out == [gr.skip(), "kept"] and "a bug in one job" in caplog.text


def test_a_part_gets_the_request_where_it_asks_for_it_as_gradio_would_give_it():
    """A failure job reads the session (Search: which index the session still holds), as its own
    handler did: a gr.Request parameter, first or last, annotated or Optional, is filled."""
    with gr.Blocks():
        a, b = gr.Textbox(), gr.Textbox()
        ev = gr.Button().click(lambda: None)
    seen = []

    def first(request: gr.Request, x):
        seen.append(("first", request, x))
        return "x"

    def last(x, request: gr.Request = None):
        seen.append(("last", request, x))
        return "y"

    def none_asked(x):
        seen.append(("none", x))
        return "z"

    for fn in (first, last, none_asked):
        lifecycle.after(ev, "success", fn, [a], [b])
    run, _, _ = lifecycle.folded(lifecycle._EVENTS[0].parts["success"])
    assert run("REQ", "value") == "z"
    assert seen == [("first", "REQ", "value"), ("last", "REQ", "value"), ("none", "value")]


def test_a_job_that_would_report_progress_is_refused_loudly():
    with gr.Blocks():
        ev = gr.Button().click(lambda: None)

    def slow(x, progress=gr.Progress()):
        return x

    with pytest.raises(ValueError, match="progress"):
        lifecycle.after(ev, "success", slow, [], [])


def test_an_unknown_outcome_is_refused():
    with gr.Blocks():
        go = gr.Button()
        ev = go.click(lambda: None)
        with pytest.raises(ValueError, match="outcome"):
            lifecycle.after(ev, "then", lambda: None)


def test_a_page_that_never_wired_leaves_nothing_for_the_next_page():
    with gr.Blocks() as first:
        ev = gr.Button().click(lambda: "x", None, out := gr.Textbox())
        lifecycle.after(ev, "success", lambda: "y", None, [out])
    with gr.Blocks() as second:
        lifecycle.wire()
    assert len(second.fns) == 0 and len(first.fns) == 1 and lifecycle.pending() == 0


@pytest.fixture(scope="module")
def page_config():
    import app

    demo = app.build_app()
    assert lifecycle.pending() == 0  # app.py wired every job it collected
    return demo.get_config_file()


@pytest.fixture(scope="module")
def page_deps(page_config):
    return page_config["dependencies"]


# An endpoint whose run on the page is a private event of its own (a stream) and whose code view that event
# writes (components/shell/endpoint.py's Code): the endpoint -> its view's prefix.
API_TWINS = {"decode": "decoding", "generate_text": "pl-generate_text"}


def test_every_endpoint_with_a_snippet_has_a_code_view_written_after_its_run(page_config):
    """Each endpoint backend/snippets writes for shows "The same in Python" on the page: the success
    of its public event writes a code view (a '<prefix>-code-python' box), or, for an API twin, the success of
    the page's own event writes its view."""
    from backend import snippets

    elem = {c["id"]: (c.get("props") or {}).get("elem_id") or "" for c in page_config["components"]}
    deps = page_config["dependencies"]
    written = collections.defaultdict(set)  # event id -> the code boxes its success writes
    for d in deps:
        if d.get("trigger_after") is not None and d.get("trigger_only_on_success"):
            written[d["trigger_after"]] |= {elem[o] for o in d["outputs"] if elem.get(o, "").endswith("-code-python")}
    everywhere = set().union(*written.values())
    missing = []
    for name in snippets.FAMILIES:
        if name in API_TWINS:
            if f"{API_TWINS[name]}-code-python" not in everywhere:
                missing.append(name)
            continue
        ids = [d["id"] for d in deps if d.get("api_name") == name]
        if not ids or not all(written[i] for i in ids):
            missing.append(name)
    assert missing == [], f"no code view written after: {missing}"
    assert len(everywhere) >= len(snippets.FAMILIES)  # a view of its own each (/build_index's apart from /search's)


def test_every_event_of_the_app_has_at_most_one_off_queue_handler_per_outcome(page_deps):
    """The fold holds on the real page: after any event, one success and one failure round trip."""
    deps = page_deps
    after = collections.Counter((d["trigger_after"], bool(d.get("trigger_only_on_success")),
                                 bool(d.get("trigger_only_on_failure"))) for d in deps
                                if d.get("trigger_after") is not None and d.get("queue") is False
                                and (d.get("trigger_only_on_success") or d.get("trigger_only_on_failure")))
    assert after and max(after.values()) == 1, [k for k, n in after.items() if n > 1][:5]
    named = {d["id"]: d["api_name"] for d in deps if d.get("api_name")}
    folded = {k[0] for k in after}
    for public in ("tokenize", "summarize", "train", "train_ner", "attribute", "search", "build_index", "intervene"):
        ids = [i for i, n in named.items() if n == public]
        assert ids and set(ids) <= folded, f"/{public} has no life cycle"  # its error box and link, at least


def _targets(dep: dict) -> list:
    """What Gradio's page keeps a loading status for once `dep` has run: its progress targets."""
    return dep["show_progress_on"] if dep.get("show_progress_on") is not None else dep["outputs"]


def test_a_page_only_event_adds_no_component_to_the_loading_statuses_the_page_keeps(page_deps):
    """Gradio's page re-applies a loading status to every component that was a progress target of any event
    that ran, on every later status message of any run: a hidden event (an open, a hand-off, a life-cycle
    job) targets nothing, or only what the event it follows already targets."""
    by_id = {d["id"]: d for d in page_deps}
    hidden = [d for d in page_deps if d.get("show_progress") == "hidden" and d.get("backend_fn") and d["targets"]
              and not str(d.get("api_name")).startswith("load_example")]  # gr.Examples' loader, as Gradio declares it;
    # no targets: an API endpoint only (gr.api), which the page never runs
    assert len(hidden) > 100
    for d in hidden:
        before = by_id.get(d.get("trigger_after"))
        follows = before is not None and (d.get("trigger_only_on_success") or d.get("trigger_only_on_failure"))
        allowed = set(_targets(before)) if follows else set()
        assert set(_targets(d)) <= allowed, (d["id"], d.get("api_name"), len(_targets(d)))
    # a failed run's statuses are replaced on its outputs (Gradio draws "Error" over each target it failed on)
    for name in ("tokenize", "summarize", "attribute"):
        run = next(d for d in page_deps if d.get("api_name") == name)
        failed = next(d for d in page_deps if d.get("trigger_after") == run["id"] and d.get("trigger_only_on_failure"))
        assert failed["show_progress_on"] and set(failed["show_progress_on"]) <= set(_targets(run)), name
