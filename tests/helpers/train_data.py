"""Toy labelled rows and a tiny encoder for the Train tab's unit tests (fixtures)."""

from __future__ import annotations


import pytest

from backend.train import store as train_store
from backend.train.store import TrainStore
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert


POS = ["good great lovely day", "great happy nice fun", "lovely nice good time", "happy good fun great",
       "nice lovely happy fun", "fun great good nice", "good good lovely happy", "great nice fun lovely"]


NEG = ["bad awful terrible night", "awful sad poor mess", "terrible bad poor sad", "sad awful bad mess",
       "poor terrible awful bad", "mess sad poor terrible", "bad bad awful poor", "awful mess terrible sad"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny(tiny_bert(seed=0), minilm_tokenizer(), tmp_path_factory.mktemp("tiny_embedder"))


@pytest.fixture
def tiny(monkeypatch, tiny_dir):
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(tiny_dir))
    monkeypatch.setattr(train_store.STORE, "_value", TrainStore())
    return tiny_dir


def csv_file(tmp_path, rows, name="data.csv", header="text,label"):
    p = tmp_path / name
    p.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return str(p)


def toy_rows(n=8):
    return [f"{t},pos" for t in POS[:n]] + [f"{t},neg" for t in NEG[:n]]
