"""scripts/test_lanes.py: every tier runs in exactly one lane, and a failing lane fails the run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lanes():
    spec = importlib.util.spec_from_file_location("test_lanes_script", ROOT / "scripts" / "test_lanes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_tier_folder_is_in_exactly_one_lane():
    tiers = sorted(f"tests/{p.parent.name}" for p in (ROOT / "tests").glob("*/test_*.py"))
    in_lanes = [folder for folders in _lanes().LANES.values() for folder in folders]
    assert sorted(set(tiers)) == sorted(in_lanes)  # none left out, none run twice


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
