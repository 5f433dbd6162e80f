"""The scaling law the From scratch tab shows predicts a size it was not fitted on: 3 layers x 64
(N = 150,080, between the family's 2 x 64 and 3 x 96), trained with the family's own recipe, lands
inside the 95 % prediction interval the fit gives for it; and the fitted exponent's interval is
computed from the family as built here (or shipped)."""

from __future__ import annotations

from backend.scratch import scaling, scaling_api


def test_a_held_out_size_lands_inside_its_prediction_interval():
    law = scaling_api.scaling_law()
    assert len(law["runs"]) >= 5 and law["span"] >= 30
    assert law["fit"]["alpha_low"] < law["fit"]["alpha"] < law["fit"]["alpha_high"]
    placed = scaling_api.place(law, scaling.train_size(3, 64))
    assert not placed["extrapolated"]
    assert placed["inside"], (placed["run"]["val_loss"], placed["predicted"])
