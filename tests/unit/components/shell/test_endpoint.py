"""An endpoint declared once (components/shell/endpoint.py): one declaration gives the public click under
its api_name, the private `also` listeners, the handler under user_errors with its planner, the failure
blanking, the notice, the link, the kept runs and the code view, the same way for every tab."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.runtime.contract import SMALL, Contract, Flag, Text
from backend.runtime.errors import InputError
from backend.runtime.plan import Plan
from components.shell import endpoint, lifecycle, links, plans
from components.shell.endpoint import After, Code, Endpoint, Link, Notice, declare, served


@pytest.fixture(autouse=True)
def _clean():
    lifecycle.reset()
    links.reset()
    yield
    lifecycle.reset()
    links.reset()


def echo(text: str, loud: bool = False):
    if not text:
        raise InputError("Type a text first.")
    return text.upper() if loud else text, {"text": text}


ECHO = Contract({"text": Text("text"), "loud": Flag()}, SMALL)  # every public endpoint declares one
ECHO_TEXT = Contract({"text": Text("text")}, SMALL)


def _plan(args: tuple) -> Plan:
    return Plan(on_server=False, long=len(args[0] or "") > 10, note="")


def _page(**extra):
    with gr.Blocks() as demo:
        text, loud = gr.Textbox(), gr.Checkbox()
        go, box, said, out, notice_md = gr.Button(), gr.Markdown(), gr.Textbox(), gr.JSON(), gr.Markdown()
        bar = links.bar("echo", run=go)
        events = declare(Endpoint(
            "echo", echo, {"text": text, "loud": loud}, [said, out], trigger=go, also=[text.submit], errors=box,
            notice=Notice(lambda o: f"{len(o['text'])} characters", [out], [notice_md]), planner=_plan,
            link=Link("echo", bar, run=go), contract=ECHO, **extra))
    return demo, events, dict(text=text, loud=loud, go=go, box=box, said=said, out=out, notice=notice_md)


def _dependencies(demo) -> list[dict]:
    return demo.config["dependencies"]


def test_the_click_is_public_under_its_name_and_the_also_listener_private():
    demo, events, _ = _page()
    assert len(events) == 2
    deps = [d for d in _dependencies(demo) if d["targets"] and d["targets"][0][1] in ("click", "submit")]
    by_trigger = {d["targets"][0][1]: d for d in deps}
    assert by_trigger["click"]["api_name"] == "echo" and by_trigger["click"]["api_visibility"] == "public"
    assert by_trigger["submit"]["api_visibility"] == "private"


def test_the_handler_runs_served_a_lab_error_in_plain_words_and_its_plan_declared():
    demo, _, _ = _page()
    fn = demo.fns[0].fn
    assert fn is served(echo, _plan)  # one wrapper for the handler, shared by both listeners
    assert demo.fns[1].fn is fn
    with pytest.raises(gr.Error, match="Type a text first"):
        fn("", False)
    assert fn("abc", True) == ("ABC", {"text": "abc"})
    assert plans.planner_of(demo.fns[0]) is _plan
    with pytest.raises(InputError):  # the plain handler is untouched: a test may call it as it is
        echo("")


def test_failure_blanks_the_outputs_and_the_notice_and_success_writes_the_notice():
    _page()
    held = {id(h.event): h for h in lifecycle._EVENTS}
    assert len(held) == 2  # the click and the submit, each with its own life cycle
    for h in held.values():
        failure_outputs = [o for part in h.parts["failure"] for o in part.outputs]
        success_outputs = [o for part in h.parts["success"] for o in part.outputs]
        kinds = {type(o).__name__ for o in failure_outputs}
        assert {"Textbox", "JSON", "Markdown"} <= kinds  # results, error box, notice line, link bar
        assert len(h.parts["failure"]) == 3 and len(h.parts["success"]) == 3  # errors, notice, link
        assert any(isinstance(o, gr.Markdown) for o in success_outputs)


def test_the_link_takes_the_endpoints_inputs_by_their_names_unless_told_otherwise():
    _page()
    assert [p.name for p in links.registered()["echo"].params] == ["text", "loud"]


def test_a_link_that_blanks_the_results_blanks_their_code_view_too_and_one_that_does_not_blanks_neither():
    from components.shell import code_view

    with gr.Blocks():
        text, go, said, out, view = gr.Textbox(), gr.Button(), gr.Textbox(), gr.JSON(), code_view.view("echo")
        declare(Endpoint("echo", echo, {"text": text}, [said, out], trigger=go, result=out, code=view, contract=ECHO_TEXT,
                         link=Link("echo", links.bar("echo", run=go), run=go, results=[said, out])))
        text2, go2, said2, out2, view2 = gr.Textbox(), gr.Button(), gr.Textbox(), gr.JSON(), code_view.view("echo2")
        declare(Endpoint("echo2", echo, {"text": text2}, [said2, out2], trigger=go2, result=out2, code=view2, contract=ECHO_TEXT,
                         link=Link("echo2", links.bar("echo2", run=go2), run=go2)))
    assert links.registered()["echo"].results == [said, out, *view.outputs]  # the snippet was written from them
    assert links.registered()["echo2"].results == []


def test_cleared_narrows_what_a_failure_blanks_and_after_adds_a_part():
    seen = []
    _page(cleared=[], after=[After("success", lambda: seen.append(1) or None, None, [])])
    h = lifecycle._EVENTS[0]
    blank_part = h.parts["failure"][0]
    assert len(blank_part.outputs) == 1  # only the error box: the results stay (a stream a Stop cut short)
    assert len(h.parts["success"]) == 4


def test_an_api_only_endpoint_has_no_trigger_and_keeps_its_name():
    with gr.Blocks() as demo:
        events = declare(Endpoint("echo_api", echo, {}, [], lane={"concurrency_limit": 1}, contract=ECHO))
    assert events == []
    names = [d["api_name"] for d in _dependencies(demo)]
    assert "echo_api" in names
    assert demo.fns[0].fn("x", True) == ("X", {"text": "x"})


def test_served_wraps_once_per_handler_and_planner():
    assert served(echo) is served(echo)
    assert served(echo, _plan) is not served(echo)
    assert endpoint.served(echo, _plan).__wrapped__ is echo


def test_a_private_event_names_its_api_twin_in_its_code_view_and_blanks_it_on_the_button_itself():
    """A stream chained after a page-only step (`trigger=first.then`) whose API twin is declared apart: its code
    view calls /echo (`Code.name`) from the prompt alone (`Code.inputs`) and is blanked in the browser by the
    button's click (`Code.trigger`)."""
    from components.shell import code_view

    with gr.Blocks() as demo:
        text, loud, go, said, out = gr.Textbox(), gr.Checkbox(), gr.Button(), gr.Textbox(), gr.JSON()
        view = code_view.view("echo")
        first = go.click(lambda: "", None, [said], **lifecycle.PAGE_ONLY)
        events = declare(Endpoint(None, echo, {"text": text, "loud": loud}, [said, out], trigger=first.then,
                                  result=out, code=Code(view, name="echo", inputs={"text": text}, trigger=go)))
    held = next(h for h in lifecycle._EVENTS if h.event is events[0])
    (part,) = held.parts["success"]
    assert part.fn.__name__ == "code_echo" and part.inputs == [text, out]  # the snippet's inputs, then the result
    deps = {d["id"]: d for d in _dependencies(demo)}
    run = deps[events[0]["id"]]
    assert run["api_visibility"] == "private" and run["trigger_after"] == first["id"]  # chained after the step
    blanks = [d for d in deps.values() if d["js"] == code_view.BLANK_JS]
    assert [[tuple(t) for t in d["targets"]] for d in blanks] == [[(go._id, "click")]]  # on the button, at once


def test_a_link_declared_apart_writes_its_bar_and_a_second_columns_bar():
    """`declare_link`: one link for two endpoints whose settings are built one after the other (the Train tab's
    two tasks): registered once with every setting and the first bar; the second endpoint writes it into its own."""
    from components.shell.endpoint import declare_link

    with gr.Blocks():
        text, loud, go, go2, box, said, out = gr.Textbox(), gr.Checkbox(), gr.Button(), gr.Button(), gr.Markdown(), \
            gr.Textbox(), gr.JSON()
        bar, bar2 = links.bar("echo"), links.bar("echo-two")
        first = declare(Endpoint("echo", echo, {"text": text}, [said, out], trigger=go, errors=box, contract=ECHO_TEXT))
        second = declare(Endpoint("echo_loud", echo, {"text": text, "loud": loud}, [said, out], trigger=go2, contract=ECHO))
        declare_link(Link("echo", bar, params={"text": text, "loud": loud}), first, more=[(second[0], bar2)])
    link = links.registered()["echo"]
    assert [p.name for p in link.params] == ["text", "loud"] and link.bar is bar
    held = {id(h.event): h for h in lifecycle._EVENTS}
    one, two = held[id(first[0])], held[id(second[0])]
    assert any(bar in p.outputs for p in one.parts["success"]) and any(bar in p.outputs for p in one.parts["failure"])
    (part,) = two.parts["success"]
    assert part.outputs == [bar2] and part.inputs == [text, loud] and not two.parts["failure"]
    assert "tab=echo" in part.fn("hi", True) and "loud=1" in part.fn("hi", True)
