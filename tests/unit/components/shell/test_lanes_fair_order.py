"""The long lane starts an address's job before a second job of an address that already runs one
(components/shell/lanes.py `fair_pick`), and keeps a slot for another address on a shared server."""

from __future__ import annotations

import pytest

from backend.runtime import clients
from components.shell import lanes


@pytest.fixture()
def shared(monkeypatch):
    monkeypatch.setenv("TLAB_CLIENT_SHARE", "0.25")
    clients.clear()
    for session, address in (("a1", "203.0.113.7"), ("a2", "203.0.113.7"), ("a3", "203.0.113.7"),
                             ("b1", "198.51.100.9"), ("c1", "192.0.2.1")):
        clients.bind(session, address)
    yield
    clients.clear()


def _ev(*sessions):
    return [(s, None) for s in sessions]


def test_a_newcomer_goes_before_the_second_job_of_an_address_that_runs_one(shared):
    assert lanes.fair_pick(_ev("a2", "a3", "b1"), _ev("a1")) == 2


def test_an_address_with_nothing_running_goes_first_in_arrival_order(shared):
    assert lanes.fair_pick(_ev("b1", "c1"), _ev("a1")) == 0


def test_the_free_slot_waits_for_another_address(shared):
    assert lanes.fair_pick(_ev("a2", "a3"), _ev("a1")) is None


def test_on_a_server_of_your_own_an_address_may_use_every_slot(monkeypatch):
    monkeypatch.setenv("TLAB_CLIENT_SHARE", "1")
    clients.clear()
    clients.bind("a1", "127.0.0.1")
    clients.bind("a2", "127.0.0.1")
    assert lanes.fair_pick(_ev("a2"), _ev("a1")) == 0
    clients.clear()


def test_the_long_lane_has_a_slot_for_a_second_address():
    from backend.runtime.config import get_settings

    assert lanes.LONG_LANE["concurrency_limit"] == get_settings().model_concurrency + 1
    assert lanes.LONG_SLOT._initial_value == lanes.LONG_LANE["concurrency_limit"]
