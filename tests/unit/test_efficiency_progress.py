"""Efficiency's progress names the step that is running, not the last one that finished (a bar that says
"Quantizing ... (first use only)" for the 13 s the encoder runs are measured misleads)."""

from __future__ import annotations

from backend.efficiency import api as efficiency
from backend.efficiency import measure
from tests.unit.test_efficiency import folders, served  # noqa: F401  (fixtures: the tiny models served)


def test_every_timed_encoder_run_is_announced_before_it_runs(served, monkeypatch):
    said: list[str] = []
    during: list[str] = []
    real = measure.labels_and_seconds

    def run(*args, **kwargs):
        during.append(said[-1])  # what the bar shows while this run works
        return real(*args, **kwargs)

    monkeypatch.setattr(measure, "labels_and_seconds", run)
    efficiency.efficiency(prompts=1, texts=1, new_tokens=8, encoder=True, progress=lambda f, d: said.append(d))
    assert during and not any("quantiz" in d.lower() for d in during), during
    assert len(set(during)) == len(during)  # each run has its own line
    assert all(d.startswith("Encoder ") for d in during)
