"""The Attention tab's "What to notice" lines say what the figure's own numbers show."""

from __future__ import annotations

import numpy as np

from components.attention import plots as P
from components.shell import notice_of


def test_a_previous_token_head_is_called_one():
    tokens = ["[CLS]", "the", "cat", "sat", "down"]
    m = np.eye(5, k=-1) * 0.9 + 0.02
    m[0, 0] = 1.0
    line = notice_of(P.attention_heatmap(m / m.sum(1, keepdims=True), tokens, "t"))
    assert line.startswith("4 of 5 tokens put their largest weight on the previous token"), line


def test_a_head_that_looks_at_one_token_names_it():
    tokens = ["a", "b", "c", "d", "e", "f"]
    m = np.full((6, 6), 0.05)
    m[:, 3] = 0.75
    m[3, 3] = 0.75
    line = notice_of(P.attention_heatmap(m, tokens, "t"))
    assert line.startswith("6 of 6 tokens look most at 'd' (position 3)"), line


def test_the_summary_names_the_most_focused_and_spread_heads():
    ent = [[2.0, 0.3], [1.5, 3.1]]
    line = notice_of(P.summary_grid({"entropy": ent, "self": [[0.1, 0.2], [0.3, 0.4]]}))
    assert "layer 0, head 1 (0.30 bits)" in line and "layer 1, head 1 (3.10 bits)" in line, line


def test_the_math_line_quotes_the_measured_difference():
    payload = {"matrices": [{"name": "weights", "shape": [2, 2], "data": [[1, 0], [0.5, 0.5]], "what": "w"}],
               "layer": 1, "head": 2, "head_dim": 32, "max_abs_diff": 3.2e-7, "tokens": ["a", "b"]}
    line = notice_of(P.math_matrices(payload))
    assert "sqrt(32)" in line and "3.2e-07" in line, line
