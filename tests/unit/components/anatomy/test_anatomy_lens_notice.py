"""The logit lens's line (components/anatomy/plots.py) names each number it gives: a share of positions where
the embedding row echoes the input, and an average top-1 probability ("at 56% of the positions (100% on
average)" read as two shares of one thing)."""

from __future__ import annotations

from components.anatomy.plots import lens_notice


def test_the_share_of_positions_and_the_average_probability_are_each_named():
    lens = {"top1_prob": [[1.0, 1.0, 0.99, 1.0], [0.3, 0.5, 0.2, 0.4]], "tied_embeddings": True,
            "embedding_echoes_input": 0.56}
    said = lens_notice(lens)
    assert "the input token itself at 56% of the positions, and its top-1 probability averages 100% over all positions" in said
    assert "its probability 35% on average" in said and "(100% on average)" not in said
