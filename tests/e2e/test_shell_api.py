"""The app shell through gradio_client: /tokenize and /status."""

from __future__ import annotations

import pytest
from gradio_client.exceptions import AppError


def test_tokenize_returns_both_tokenizers(client):
    *_, data = client.predict("Tokenizing text is fun 🤗", True, api_name="/tokenize")
    enc, dec = data["results"]["encoder"], data["results"]["decoder"]
    assert enc["tokens"][0]["token"] == "[CLS]" and enc["algorithm"] == "WordPiece"
    assert dec["algorithm"].startswith("BPE") and dec["model"]["checkpoint"].endswith("SmolLM2-135M-Instruct")
    assert [t["id"] for t in enc["tokens"]] == enc["ids"]


def test_tokenize_empty_and_huge(client):
    *_, data = client.predict("", True, api_name="/tokenize")
    assert data["results"]["encoder"]["count"] == 2
    with pytest.raises(AppError, match="at most"):
        client.predict("word " * 30_000, True, api_name="/tokenize")


def test_status_lists_every_role(client):
    header, table = client.predict(api_name="/status")
    roles = [row[0] for row in table["data"]]
    assert "decoder" in roles and "fill_mask" in roles and "Profile" in header
