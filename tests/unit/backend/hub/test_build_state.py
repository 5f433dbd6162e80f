"""`python -m backend.hub build` returns at once, without importing torch, when nothing the build reads changed
and what it left is still in the cache (backend/hub/build_state.py); anything else asks every builder."""

import json
import os
import subprocess
import sys
import time

import pytest

from backend.hub import build_state, code_keys

STEPS = ("backend.scratch.scaling_build",)


@pytest.fixture
def cache(tmp_path):
    root = tmp_path / "cache"
    (root / "trained" / "toy-v1-abc").mkdir(parents=True)
    (root / "trained" / "toy-v1-abc" / ".complete").write_text("toy-v1-abc")
    return root


def test_a_recorded_build_is_up_to_date_until_an_output_goes(cache):
    assert not build_state.up_to_date(cache, STEPS)  # never built here
    build_state.record(cache, build_state.inputs_digest(STEPS), STEPS)
    assert json.loads((cache / build_state.STATE_FILE).read_text())["outputs"] == ["trained/toy-v1-abc/.complete"]
    assert build_state.up_to_date(cache, STEPS)
    assert not build_state.up_to_date(cache, ())  # other steps: ask the builders
    (cache / "trained" / "toy-v1-abc" / ".complete").unlink()  # a wiped folder builds again
    assert not build_state.up_to_date(cache, STEPS)


def test_any_changed_input_asks_the_builders(cache, tmp_path, monkeypatch):
    code, data = tmp_path / "code.py", tmp_path / "data"
    code.write_text("X = 1\n")
    (data / "set").mkdir(parents=True)
    (data / "set" / "train.jsonl").write_text('{"text": "a"}\n')
    monkeypatch.setattr(build_state, "closure", lambda modules, follow: {"m": code})
    monkeypatch.setattr(build_state, "ROOT", tmp_path)
    monkeypatch.setattr(build_state, "DATA_DIRS", ("data",))
    build_state.record(cache, build_state.inputs_digest(STEPS), STEPS)
    assert build_state.up_to_date(cache, STEPS)
    (data / "set" / "train.jsonl").write_text('{"text": "b"}\n')
    assert not build_state.up_to_date(cache, STEPS)
    build_state.record(cache, build_state.inputs_digest(STEPS), STEPS)
    code.write_text("X = 1  # a comment counts here: a check, not a key\n")
    assert not build_state.up_to_date(cache, STEPS)


def test_the_check_reads_the_whole_build_and_its_steps_code():
    files = {str(p.relative_to(code_keys.ROOT)) for p in
             code_keys.closure(build_state.ENTRY + STEPS, follow=None).values()}
    assert {"backend/hub/cli.py", "backend/hub/builders.py", "backend/hub/loader.py", "backend/engines/ner/serving.py",
            "backend/scratch/scaling_build.py", "backend/scratch/scaling.py", "backend/runtime/config.py"} <= files


def test_an_up_to_date_build_returns_at_once_without_importing_torch(cache):
    build_state.record(cache, build_state.inputs_digest(STEPS), STEPS)
    script = ("import sys, time; t = time.perf_counter(); from backend.hub import cli; "
              f"rc = cli.main(['build', '--step', '{STEPS[0]}']); "
              "print(rc, 'torch' in sys.modules, round(time.perf_counter() - t, 2))")
    env = {**os.environ, "TLAB_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script], cwd=code_keys.ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    wall = time.perf_counter() - start
    rc, torch_imported, seconds = out.stdout.split()[-3:]
    assert "up to date" in out.stdout and rc == "0" and torch_imported == "False", out.stdout + out.stderr
    assert wall < 5, f"{wall:.2f} s (the check: {seconds} s)"  # ~0.5 s on a quiet 2-core box
