"""A long job's slot goes back when its generator ends, fails or is closed early: a slot lost once
left every later long job of the process waiting for ever (the e2e tier hung on it)."""

from __future__ import annotations

import threading

import pytest

from backend.runtime import budget
from backend.runtime.errors import InputError
from components.shell import cancel, lanes


@pytest.fixture
def slot(monkeypatch):
    s = threading.BoundedSemaphore(1)
    monkeypatch.setattr(lanes, "LONG_SLOT", s)
    monkeypatch.setattr(cancel, "_register", lambda b: "long")  # as if Gradio ran it in the long lane
    return s


def _free(s) -> bool:
    if s.acquire(blocking=False):
        s.release()
        return True
    return False


def test_the_slot_is_held_while_it_runs_and_given_back_when_it_ends(slot):
    def job():
        yield 1
        yield 2

    steps = cancel.bounded_steps(job(), budget.Budget())
    assert next(steps) == 1 and not _free(slot)
    assert list(steps) == [2] and _free(slot)


def test_the_slot_is_given_back_when_the_job_fails_or_is_closed_early(slot):
    def refused():
        raise InputError("does not fit one request")
        yield

    with pytest.raises(InputError):
        list(cancel.bounded_steps(refused(), budget.Budget()))
    assert _free(slot)

    def endless():
        while True:
            yield 0

    steps = cancel.bounded_steps(endless(), budget.Budget())
    next(steps)
    steps.close()  # a Stop
    assert _free(slot)
