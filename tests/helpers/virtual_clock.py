"""A clock made of the work a test's fakes say they did: `sleep` moves it on, nothing else does.

A module's `time` swapped for it (`installed(monkeypatch, module)`) makes that module's timing
arithmetic exact, whatever else the box is busy with: a test asserts what the code computes from
durations, never how long the box took (CI once stretched a real 0.03 s sleep to 0.8 s). It has only
the readings those modules take: a module that starts to call anything else fails loudly."""

from __future__ import annotations


class VirtualClock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def perf_counter(self) -> float:
        return self.now

    monotonic = perf_counter

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def installed(monkeypatch, *modules) -> VirtualClock:
    """A new clock, set as each module's `time` for this test."""
    clock = VirtualClock()
    for module in modules:
        monkeypatch.setattr(module, "time", clock)
    return clock
