"""The Train tab's NER epochs slider and the public API read one limit (`ner_api.max_epochs`), so the page
never offers a number of epochs the API refuses."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.runtime.errors import InputError
from backend.train import ner_api

pytestmark = pytest.mark.unit


def _slider_max() -> float:
    from components.train import ner

    with gr.Blocks() as demo:
        ner.build()
    sliders = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "train-ner-epochs"]
    assert len(sliders) == 1
    return sliders[0].maximum


@pytest.mark.parametrize("public,expected", [("1", ner_api.PUBLIC_MAX_EPOCHS), ("0", ner_api.MAX_EPOCHS)])
def test_the_slider_offers_what_the_api_takes(monkeypatch, public, expected):
    monkeypatch.setenv("TLAB_PUBLIC", public)
    assert ner_api.max_epochs() == expected == _slider_max()
    assert ner_api.check_args(epochs=expected).recipe.epochs == expected
    with pytest.raises(InputError, match="epochs must be between 1 and"):
        ner_api.check_args(epochs=expected + 1)
