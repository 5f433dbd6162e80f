"""An endpoint's contract: its ranges refuse what the handler would refuse, in the same words, and its cost is
refused at the door when it is over the request's memory share, over the time budget for work that cannot stop,
or made of steps too long for the budget to end it in time."""

from __future__ import annotations

import pytest

from backend.runtime import contract as C
from backend.runtime.errors import InputError
from components.shell import door


def test_ranges_refuse_out_of_range_values_in_the_handlers_words():
    spec = C.Contract({"text": C.Text("query"), "k": C.Int(1, 50), "t": C.Num(0, 1), "how": C.Choice(("a", "b")),
                       "on": C.Flag(), "box": C.Free(10), "js": C.Json(50, 2, 3), "many": C.Many(("x", "y"), 2)})
    good = {"text": "hello", "k": 3, "t": 0.5, "how": "A", "on": "true", "box": "m", "js": "[1, 2]", "many": ["x"]}
    assert spec.check(good)["how"] == "a"
    for name, bad, words in [("k", 51, "between 1 and 50"), ("k", float("nan"), "whole number"), ("t", 2, "between"),
                             ("how", "c", "one of"), ("on", "maybe", "true or false"), ("box", "x" * 11, "at most 10"),
                             ("js", "[1, 2, 3, 4]", "at most 3"), ("js", [[[1]]], "nested"), ("many", ["z"], "one of"),
                             ("text", "q" * 2001, "at most 2,000"), ("text", "", "empty")]:
        with pytest.raises(InputError, match=words):
            spec.check({**good, name: bad})


def test_optional_values_take_their_default():
    spec = C.Contract({"seed": C.Int(0, 9, optional=True), "how": C.Choice(("a",), optional=True),
                       "b": C.Text("text", optional=True)})
    assert spec.check({"seed": None, "how": "", "b": ""}) == {"seed": None, "how": "", "b": ""}


def test_a_bound_may_depend_on_the_servers_mode():
    limit = {"hi": 5}
    spec = C.Contract({"n": C.Int(1, lambda: limit["hi"])})
    spec.check({"n": 5})
    limit["hi"] = 4
    with pytest.raises(InputError, match="between 1 and 4"):
        spec.check({"n": 5})
    assert spec.extreme({"n": 1}) == {"n": 4}


def test_the_extreme_call_is_the_valid_one_at_every_edge():
    spec = C.Contract({"text": C.Text("query"), "k": C.Int(1, 50), "how": C.Choice(("a", "b")), "flag": C.Flag()})
    most = spec.extreme({"text": "What is a [MASK]?", "k": 2, "how": "a", "flag": False})
    assert most["k"] == 50 and most["how"] == "a" and most["flag"] is True
    assert len(most["text"]) == 2000 and most["text"].startswith("What is a [MASK]?")
    spec.check(most)  # the extreme is inside the ranges


@pytest.mark.parametrize("cost, words", [
    (C.Cost(mb=10**6), "MB while it runs"),
    (C.Cost(s=10**6, what="this run"), "would take about"),
    (C.Cost(s=10**6, stoppable=True, step_s=C.STEP_LIMIT_S + 1, what="training"), "One step of training"),
])
def test_a_cost_over_a_budget_is_refused_with_the_reason(cost, words, monkeypatch):
    monkeypatch.setenv("TLAB_TIME_BUDGET_S", "60")
    assert words in C.refusal(cost)


def test_work_that_stops_between_short_steps_may_outlast_the_budget(monkeypatch):
    monkeypatch.setenv("TLAB_TIME_BUDGET_S", "60")
    assert C.refusal(C.Cost(mb=10, s=10**4, stoppable=True, step_s=1.0)) is None
    assert C.refusal(C.Cost(mb=10, s=59)) is None


def test_the_door_reads_a_request_by_its_argument_names_and_admits_what_it_cannot_price():
    def handler(text, k):
        return text

    door.attach(handler, C.Contract({"text": C.Text("query"), "k": C.Int(1, 5)}, lambda v: C.Cost(s=1)), ["text", "k"])
    assert door.refusal(handler, ["a query", 3]) is None
    assert "between 1 and 5" in door.refusal(handler, ["a query", 9])

    def broken(values):
        raise RuntimeError("a bug in a cost function")

    door.attach(handler, C.Contract({"text": C.Text("query"), "k": C.Int(1, 5)}, broken), ["text", "k"])
    assert door.refusal(handler, ["a query", 3]) is None  # the handler's own checks then decide
    assert door.api_parameters(lambda prompt, settings=None, progress=None: 0) == ["prompt", "settings"]


def test_a_file_uploaded_by_another_address_is_refused_at_the_door(tmp_path):
    from backend.runtime import clients

    mine, theirs = tmp_path / "mine.txt", tmp_path / "theirs.txt"
    clients.claim(mine, "10.0.0.1")
    clients.claim(theirs, "10.0.0.2")
    data = ["glossary", {"path": str(mine), "meta": {"_type": "gradio.FileData"}}]
    assert door.foreign_upload(data, "10.0.0.1") is None
    assert "another visitor" in door.foreign_upload(["x", [{"path": str(theirs)}]], "10.0.0.1")
    assert door.foreign_upload(["x", {"path": str(tmp_path / "nobody.txt")}], "10.0.0.1") is None
