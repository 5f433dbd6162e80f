"""The Train tab's figures: a method that did not run shows no blank axes, and a label keeps
its colour in every map of a run (the frozen and the fine-tuned map list labels in different orders)."""

from __future__ import annotations

from components.train.ui import shown
from components.train.plots import confusion_figure, curve_figure, loss_figure, map_figure


def _map(labels_in_order: list[str]) -> dict:
    n = len(labels_in_order)
    return {"method": "PCA", "of": "the frozen encoder's hidden states (train split)",
            "explained_variance": [0.1, 0.05], "label_names": ["negative", "neutral", "positive"],
            "x": list(range(n)), "y": list(range(n)), "labels": labels_in_order, "texts": ["t"] * n}


def test_a_label_has_one_colour_in_every_map():
    a = map_figure(_map(["negative", "positive", "neutral", "positive"]))
    b = map_figure(_map(["positive", "neutral", "negative"]))
    colours = [{t.name: t.marker.color for t in fig.data} for fig in (a, b)]
    assert colours[0] == colours[1] and len(set(colours[0].values())) == 3
    assert [t.name for t in a.data] == ["negative", "neutral", "positive"]  # the data set's label order
    assert "<br>(train split)" in a.layout.title.text  # two lines: fits a half-width plot


def test_what_did_not_run_is_hidden_not_blank():
    assert map_figure(None) is None and curve_figure(None) is None and confusion_figure({}) is None
    hidden = shown(None)
    assert hidden["visible"] is False and hidden["value"] is None  # no stale figure either
    fig = loss_figure([1.2, 1.0, 0.9], [{"step": 3, "val_loss": 0.95, "epoch": 1.0, "val_accuracy": 0.5}], 3)
    visible = shown(fig)
    assert visible["visible"] is True and visible["value"] is fig
    assert fig.layout.xaxis.dtick == 1  # whole steps on a short run
