"""scripts/test_lanes.py: every tier runs in exactly one lane, and a failing lane fails the run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _lanes():
    spec = importlib.util.spec_from_file_location("test_lanes_script", ROOT / "scripts" / "test_lanes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_tier_folder_is_in_exactly_one_lane():
    tiers = sorted(f"tests/{p.relative_to(ROOT / 'tests').parts[0]}" for p in (ROOT / "tests").rglob("test_*.py"))
    lanes = _lanes()
    in_lanes = [folder for folders in lanes.LANES.values() for folder in folders if not folder.endswith(".py")]
    off = list(lanes.OFF_LANES)
    assert not set(in_lanes) & set(off)
    assert sorted(set(tiers)) == sorted(in_lanes + off)  # none left out, none run twice, the rest say why
    assert all(lanes.OFF_LANES[folder].strip() for folder in off)


def test_every_test_file_runs_in_exactly_one_lane():
    """A file a lane takes from another lane's folder (the ZeroGPU e2e test beside the browser tier) is run there
    and ignored by the folder's own lane: each test file runs once."""
    lanes = _lanes()
    moved = [p for paths in lanes.LANES.values() for p in paths if p.endswith(".py")]
    assert moved and all((ROOT / p).is_file() for p in moved)

    def runs(name: str, path: str) -> bool:
        args = lanes.lane_args(name)
        ignored = {a.split("=", 1)[1] for a in args if a.startswith("--ignore=")}
        return path not in ignored and any(path == a or path.startswith(a + "/") for a in args if a[:2] != "--")

    for p in sorted((ROOT / "tests").rglob("test_*.py")):
        path = str(p.relative_to(ROOT))
        where = [name for name in lanes.LANES if runs(name, path)]
        off = [folder for folder in lanes.OFF_LANES if path.startswith(folder + "/")]
        assert len(where) + len(off) == 1, (path, where, off)


def test_the_tier_no_lane_runs_skips_cleanly_without_cuda():
    """tests/gpu is left out of the lanes because it needs CUDA: without it, every test there skips (no
    errors), and a run that requires the device fails instead of passing on skips."""
    import os
    import subprocess
    import sys

    import pytest
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: tests/gpu runs for real")
    env = {k: v for k, v in os.environ.items() if k not in ("TLAB_GPU_DRY_RUN", "TLAB_REQUIRE_GPU")}
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/gpu"]
    plain = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stdout[-2000:] + plain.stderr[-2000:]
    assert " skipped" in plain.stdout and "passed" not in plain.stdout and "error" not in plain.stdout.lower()
    required = subprocess.run(cmd, cwd=ROOT, env=dict(env, TLAB_REQUIRE_GPU="1"), capture_output=True, text=True,
                              timeout=300)
    assert required.returncode != 0 and "TLAB_REQUIRE_GPU=1" in required.stdout + required.stderr


def test_a_failing_lane_fails_the_run_and_each_log_is_printed(tmp_path, capsys):
    lanes = _lanes()
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "test_no.py").write_text("def test_no():\n    assert 1 == 2\n")
    lanes.ARTIFACTS = tmp_path / "artifacts"
    lanes.LANES = {"good": [str(tmp_path / "good")], "bad": [str(tmp_path / "bad")]}
    assert lanes.run(serial=False) == 1
    out = capsys.readouterr().out
    assert "lane good" in out and "1 passed" in out and "lane bad" in out and "1 failed" in out
    lanes.LANES = {"good": [str(tmp_path / "good")]}
    assert lanes.run(serial=True) == 0
