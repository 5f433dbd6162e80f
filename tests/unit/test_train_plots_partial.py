"""A learning-curve point can be empty (None: the run stopped before that point's
fine-tuning); the figure draws it as a gap and its line says so (formatting it as a number would crash
`/train` with "could not use the values")."""

from __future__ import annotations

import pytest

from components.train.plots import curve_figure

pytestmark = pytest.mark.unit


def _notice(fig) -> str:
    return (fig.layout.meta or {}).get("notice", "")


def test_an_empty_point_is_a_gap_and_said():
    curve = {"sizes": [8, 16, 32, "all"], "examples": [48, 96, 192, 1000], "test_n": 300,
             "zero_shot": [0.4] * 4, "probe": [0.5, 0.55, 0.6, 0.7], "finetune": [0.45, 0.6, None, None]}
    fig = curve_figure(curve)
    line = _notice(fig)
    assert "0.45 with 8 to 0.60 with 16" in line and "2 " in line and "not measured" in line
    assert list(fig.data[2].y)[2:] == [None, None]  # plotly draws a gap


@pytest.mark.parametrize("points", [[None, None], [None, 0.5], [0.5, None]])
def test_any_pattern_of_empty_points_draws(points):
    curve = {"sizes": [8, "all"], "examples": [48, 100], "test_n": 50, "finetune": points}
    fig = curve_figure(curve)
    assert fig is not None and len(fig.data) == 1
    if any(p is not None for p in points):
        assert "one point" in _notice(fig)
