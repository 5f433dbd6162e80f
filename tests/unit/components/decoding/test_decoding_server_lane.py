"""With a generation server, the Decoding tab's Generate joins the decode lane (the server batches a
class's requests), and what must run here and is long still takes the long lane's slot: the
admission reads the tab's own settings, and the handler holds the slot itself."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from backend.runtime.errors import InputError
from components.shell import lanes as common
from components.decoding import handlers as tab
from components.shell.endpoint import served
from components.shell.guard import _guarded


def _args(strategy="greedy", max_new=32, beams=4, n_return=1, model=""):
    # prompt, the 14 knobs, precision, temperatures, model box: the run's inputs in the page's order
    return ("Once upon a time", strategy, max_new, 1.0, 0, 1.0, beams, 1.0, 0, False, n_return, 1.0, "", False, 5,
            "fp32", "0.5, 1.0, 2.0", model)


def _event(args):
    # as the page wires it: the handler as the tab declares it (its planner), guard included
    fn = SimpleNamespace(concurrency_id="decode", fn=_guarded(served(tab.run, tab._decode_plan)))
    return common._event_is_long(fn, list(args))


@pytest.mark.parametrize("server_up", [True, False])
def test_admission_reads_the_tabs_settings_and_where_they_run(monkeypatch, server_up):
    from backend.engines.server import generation as remote

    monkeypatch.setattr(remote, "configured_url", lambda: "http://127.0.0.1:9/engine")
    monkeypatch.setattr(remote, "last_known_up", lambda: server_up)  # its last health check, no network
    plan = tab._decode_plan(_args())
    # 32 greedy tokens: the server may run them (asked again when down), and they are short work here
    assert not plan.long and plan.on_server and plan.note is None
    beam = tab._decode_plan(_args(strategy="beam", max_new=8))
    assert not beam.on_server and "Beam search ran in-process" in beam.note  # the note its result will show
    assert _event(_args(strategy="beam", max_new=8))  # beam never runs on the server: long
    assert _event(_args(max_new=100)) is (not server_up)  # 100 greedy tokens: the server's, or long here
    assert not _event(_args(max_new=8))  # a short decode is short wherever it runs
    assert _event(_args(max_new=100, model="session:tinygpt-x"))  # a model-box model always runs here
    assert tab._decode_plan(_args(model="  ", max_new=100)).on_server  # an empty box is no model
    assert not tab._decode_plan(_args(model="session:tinygpt-x")).on_server


def test_unreadable_inputs_are_left_to_the_handler_to_refuse():
    assert not _event(("only a prompt",))


def test_the_slot_is_held_for_long_work_here_and_a_busy_lane_is_said(monkeypatch):
    slot = threading.BoundedSemaphore(1)
    monkeypatch.setattr(common, "LONG_SLOT", slot)
    with common.long_slot_for(True):
        assert not slot.acquire(blocking=False)  # held
    assert slot.acquire(blocking=False)  # given back
    monkeypatch.setenv("TLAB_TIME_BUDGET_S", "0.05")  # settings are read from the environment on each call
    with pytest.raises(InputError, match="long-job lane stayed busy"):
        with common.long_slot_for(True):
            pass
    with common.long_slot_for(False):  # work the server does needs no slot
        pass
    slot.release()
