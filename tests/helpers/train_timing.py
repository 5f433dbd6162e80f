"""The Train tab's estimates on a virtual clock: a slow worker, clean rates, the rows (fixtures)."""

from __future__ import annotations


import numpy as np
import pytest

from backend.engines.classify import finetune as FT
from backend.runtime.rates import RATES
from tests.helpers.virtual_clock import installed


MODEL = "truth-test-model"  # a rate key no other test measures


@pytest.fixture
def clean_rates():
    RATES.forget()
    yield
    RATES.forget()


# ----------------------------------------------------------------------------- the plan
def rows_of_length(n, chars=20):
    return [("x" * chars, i % 2) for i in range(n)]


@pytest.fixture
def clock(monkeypatch):
    """The fine-tuning loop's clock, moved only by the fake worker's steps: the re-plan is tested exactly."""
    return installed(monkeypatch, FT)


class SlowWorker:
    """A fake worker: each optimiser step takes `step_s` seconds, each validation forward `eval_s`,
    on `clock`."""

    rate_model = MODEL

    def __init__(self, clock, step_s=0.02, eval_s=0.01):
        self.clock, self.step_s, self.eval_s = clock, step_s, eval_s

    def train_chunk(self, state, batches, n_labels, lr, step0, total, seed, time_limit_s, stop_key=None):
        start, losses = self.clock.perf_counter(), []
        for _ in batches:
            self.clock.sleep(self.step_s)
            losses.append(0.5)
            if self.clock.perf_counter() - start > time_limit_s:
                break
        return {"state": {"model": {}}, "losses": losses, "step_s": [self.step_s] * len(losses)}

    def forward_chunk(self, weights, texts, n_labels, stop_key=None):
        self.clock.sleep(self.eval_s)
        return np.full((len(texts), n_labels), 1.0 / n_labels), np.zeros((len(texts), 2), dtype=np.float32)


def drain(gen):
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            return events, done.value
