"""A session's trained classifier put to use, on tiny random models: "Use in Pipelines" and
"Download" stay inside their session; the offline sentiment classifier is fine-tuned once by a
fixed number of steps, cached atomically, and served as a sequence classifier whose
description carries its test score."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from backend.runtime import budget as request_budget
from backend.runtime import config
from backend import hub
from backend.runtime.errors import InputError
from backend.pipelines import api as papi
from backend.train import api, use
from backend.hub import builders as offline
from tests.helpers.train_data import csv_file, toy_rows, tiny, tiny_dir  # noqa: F401 (fixtures)


@pytest.fixture
def two_sessions(tiny, tmp_path):
    """Session "a" trained a probe on pos/neg; session "b" trained nothing."""
    api.train("a", "upload", csv_file(tmp_path, toy_rows(), "a.csv"), methods=["probe"], learning_curve=False)
    return "a", "b"


# ----------------------------------------------------------------------------- Use in Pipelines
def test_use_in_pipelines_serves_only_its_own_session(two_sessions, monkeypatch):
    a, b = two_sessions
    profile = {"task": "classify", "method": "profile"}
    monkeypatch.setattr(papi, "_classify", lambda *args, **kw: profile)
    assert papi.classify("good lovely fun", session_id=a) is profile  # not asked yet: the profile's model
    r = use.use_trained(a, True)
    assert r["in_use"] and r["method"] == "probe" and r["model"]["source"] == "session"
    assert r["model"]["checkpoint"].startswith("your classifier trained on a.csv, test acc ")
    out = papi.classify("good lovely fun\nbad awful mess", batch=True, session_id=a)
    assert out["method"] == use.SESSION_METHOD and out["model"]["trained_on"] == "a.csv"
    assert [sorted(x["labels"]) for x in out["results"]] == [["neg", "pos"], ["neg", "pos"]]
    expected = api.predict_trained(a, "good lovely fun")
    assert out["results"][0]["labels"][0] == expected["label"]
    assert out["results"][0]["scores"][0] == pytest.approx(expected["scores"][0], abs=1e-4)
    # The other session, a session without a model, and a filled model box keep the profile's model.
    assert papi.classify("good lovely fun", session_id=b) is profile
    assert papi.classify("good lovely fun", session_id=None) is profile
    assert papi.classify("good lovely fun", override="some/model", session_id=a) is profile
    with pytest.raises(InputError, match="No trained model in this session yet"):
        use.use_trained(b, True)
    assert use.use_trained(a, "false")["in_use"] is False
    assert papi.classify("good lovely fun", session_id=a) is profile


def test_use_trained_checks_its_parameters_before_the_session(tiny):
    with pytest.raises(InputError, match="^on must be"):
        use.use_trained("nobody", "maybe")
    with pytest.raises(InputError, match="^method must be one of"):
        use.use_trained("nobody", True, "magic")
    with pytest.raises(InputError, match="^method must be one of"):
        use.export("nobody", float("nan"))


def test_a_new_training_puts_pipelines_back_on_the_profile_model(two_sessions, tmp_path):
    a, _ = two_sessions
    use.use_trained(a, True)
    assert use.in_use(a) is not None
    api.train(a, "upload", csv_file(tmp_path, toy_rows(), "again.csv"), methods=["probe"], learning_curve=False)
    assert use.in_use(a) is None


# ----------------------------------------------------------------------------- Download
def _card_logits(folder: Path, texts: list[str]) -> np.ndarray:
    """The model card's own recipe, run on the unzipped folder."""
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    tok, enc = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    batch = tok(texts, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        h = enc(**batch).last_hidden_state
    m = batch["attention_mask"].unsqueeze(-1).float()
    pooled = (h * m).sum(1) / m.sum(1)
    p = load_file(str(folder / "probe.safetensors"))
    z = (torch.nn.functional.normalize(pooled, dim=1) - p["mean"]) / p["scale"]
    return (z @ p["weight"] + p["bias"]).numpy()


def test_download_is_a_save_pretrained_zip_with_a_card_in_the_sessions_own_folder(two_sessions, tmp_path):
    a, b = two_sessions
    r = use.export(a, root=str(tmp_path / "served"))  # the tab passes the web server's file cache
    path = Path(r["path"])
    assert path.suffix == ".zip" and path.parent.name.startswith("tlab-train-")
    assert path.parent.parent == tmp_path / "served"
    with zipfile.ZipFile(path) as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
        z.extractall(tmp_path / "out")
    assert {"README.md", "config.json", "model.safetensors", "probe.safetensors", "labels.json",
            "tokenizer.json"} <= names
    folder = next((tmp_path / "out").iterdir())
    card = (folder / "README.md").read_text()
    acc = api.session_model(a)["scores"]["probe"]["accuracy"]
    assert "a.csv" in card and "feature extraction + logistic regression" in card and f"accuracy {acc:.4f}" in card
    labels = json.loads((folder / "labels.json").read_text())
    texts = ["good lovely fun", "bad awful mess"]
    logits = _card_logits(folder, texts)
    for text, row in zip(texts, logits):  # the card's recipe reproduces the session's classifier
        assert labels[int(row.argmax())] == api.predict_trained(a, text)["label"]
    with pytest.raises(InputError, match="No trained model in this session yet"):
        use.export(b)
    api.drop_session(a)  # the session's files die with it
    assert not path.exists() and not path.parent.exists()


def test_download_of_a_fine_tuned_model_holds_its_head(tiny, tmp_path):
    api.train("f", "upload", csv_file(tmp_path, toy_rows()), methods=["finetune"], epochs=1, batch_size=4,
              max_seconds=60, learning_curve=False)
    r = use.export("f", "finetune")
    with zipfile.ZipFile(r["path"]) as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
        card = z.read(next(n for n in z.namelist() if n.endswith("README.md"))).decode()
    assert {"head.safetensors", "model.safetensors", "config.json", "README.md"} <= names
    assert "probe.safetensors" not in names and "fine-tuning" in card


def test_an_evicted_session_loses_its_files(two_sessions):
    a, _ = two_sessions
    from backend.train.store import get_store

    store = get_store()
    folder = store.files_dir(a)
    (folder / "x.zip").write_bytes(b"zip")
    store.evict(now=1e12)  # idle for ages
    assert a not in store and not folder.exists()


# ----------------------------------------------------------------------------- the offline sentiment classifier
def test_the_offline_classifier_is_fine_tuned_once_and_cached(tiny, tmp_path, monkeypatch):
    from backend.engines.classify import datasets as D
    from backend.engines.classify import finetune as FT

    folder, meta = offline.ensure(hub.load("embedder"), tiny, root=tmp_path)
    assert meta["cached"] is False and meta["labels"] == ["NEGATIVE", "NEUTRAL", "POSITIVE"]
    assert meta["sizes"] == {"train": 380, "validation": 82, "test": 82}
    assert meta["epochs"] == 3 and meta["steps"] == 3 * 24  # fixed steps: ceil(380 / 16) per epoch
    assert 0 <= meta["test_accuracy"] <= 1 and meta["best_epoch"] in (1.0, 2.0, 3.0)
    assert FT._SCRATCH == {}  # the one-off run's scratch copy of the encoder is freed
    monkeypatch.setattr(offline, "train", lambda *a: pytest.fail("trained twice"))
    again, meta2 = offline.ensure(hub.load("embedder"), tiny, root=tmp_path)
    assert again == folder and meta2["cached"] is True and meta2["test_accuracy"] == meta["test_accuracy"]
    assert folder == offline.cache_dir(tiny, tmp_path) and (folder / ".complete").exists()
    assert [p.name for p in folder.parent.iterdir() if p.is_dir()] == [folder.name]  # no temp leftovers
    assert {"config.json", "model.safetensors", FT.HEAD_FILE, "labels.json", "meta.json",
            "tokenizer.json"} <= {p.name for p in folder.iterdir()}
    # Served as one module, it scores on the test split exactly what its description says.
    model, tok, served_meta, _ = offline.serving_model(hub.load("embedder"), tiny, "cpu", torch.float32, root=tmp_path)
    assert model.config.id2label == {0: "NEGATIVE", 1: "NEUTRAL", 2: "POSITIVE"}
    test = D.load_shipped("sentiment").test
    batch = tok([t for t, _ in test], padding=True, truncation=True, max_length=FT.MAX_LENGTH, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
    acc = float((logits.argmax(-1).numpy() == np.array([y for _, y in test])).mean())
    assert acc == pytest.approx(served_meta["test_accuracy"], abs=1e-4)


def test_the_offline_fine_tune_ignores_the_requests_budget_and_cancel(tiny, tmp_path):
    """A cancelled or expired request must neither cut the one training short nor cache half a model."""
    with request_budget.scope(seconds=0.001) as b:
        b.cancel()
        folder, meta = offline.ensure(hub.load("embedder"), tiny, root=tmp_path)
    assert meta["steps"] == 72 and (folder / ".complete").exists()


def test_a_fine_tune_that_does_not_finish_caches_nothing(tiny, tmp_path, monkeypatch):
    from dataclasses import replace

    from backend.engines.classify import sentiment_recipe  # the recipe reads its budget in its own module

    monkeypatch.setattr(sentiment_recipe, "RECIPE_BUDGET", replace(offline.RECIPE_BUDGET, max_seconds=0.0))
    with pytest.raises(RuntimeError, match="stopped after 0 of 72 steps"):
        offline.ensure(hub.load("embedder"), tiny, root=tmp_path)
    assert not [p for p in (tmp_path / "trained").iterdir() if p.is_dir()]


def test_a_crash_while_training_leaves_no_cache(tiny, tmp_path, monkeypatch):
    def boom(*a):
        raise RuntimeError("killed")

    monkeypatch.setattr(offline, "train", boom)
    with pytest.raises(RuntimeError):
        offline.ensure(hub.load("embedder"), tiny, root=tmp_path)
    assert not [p for p in (tmp_path / "trained").iterdir() if p.is_dir()]  # no folder, no temp leftovers


def test_the_recipe_fine_tunes_the_embedder_it_names(tiny, tmp_path, monkeypatch):
    from backend.runtime.errors import ModelLoadError

    elsewhere = hub.Resolved("sentiment", "other", "embedder", config.METHOD_FINETUNED, "package",
                             "packaged offline model (local profile)", str(tmp_path))
    plain = hub.ModelHub.resolve
    monkeypatch.setattr(hub.ModelHub, "resolve",
                        lambda self, role, override=None: elsewhere if role == "sentiment" else plain(self, role, override))
    monkeypatch.setattr(hub.HUB, "_value", hub.ModelHub())
    with pytest.raises(ModelLoadError, match="fine-tunes the embedder role's encoder"):
        hub.load("sentiment")


def test_the_hub_serves_the_fine_tuned_sentiment_role(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("TLAB_CACHE_DIR", str(tmp_path))
    sentiment = hub.Resolved("sentiment", "tiny-minilm", "embedder", config.METHOD_FINETUNED, "package",
                                "packaged offline model (local profile)", str(tiny), note="fine-tuned here")
    plain = hub.ModelHub.resolve
    monkeypatch.setattr(hub.ModelHub, "resolve",
                        lambda self, role, override=None: sentiment if role == "sentiment" else plain(self, role, override))
    monkeypatch.setattr(hub.HUB, "_value", hub.ModelHub())
    seen = []
    lm = hub.load("sentiment", progress=lambda f, text: seen.append((f, text)))
    assert seen[0][1] == "Loading the sentiment model (first use only)"
    assert seen[-1] == (1.0, "Training the offline sentiment classifier (first use only): step 72 of 72")
    d = lm.describe()
    assert d["method"] == "fine-tuned" and d["trained_on"] == "sentiment (shipped)" and d["steps"] == 72
    assert 0 <= d["test_accuracy"] <= 1 and f"(test accuracy {d['test_accuracy']:.3f})" in d["note"]
    assert hub.load("sentiment").model is lm.model  # loaded once
    assert lm.model is not hub.load("embedder").model  # its own, fine-tuned copy
    r = papi._classify(["A lovely day.", "Awful."], "", None, None, None)
    assert r["method"] == "fine-tuned" and r["model"]["test_accuracy"] == d["test_accuracy"]
    assert sorted(r["results"][0]["labels"]) == ["NEGATIVE", "NEUTRAL", "POSITIVE"]
    assert sum(r["results"][0]["scores"]) == pytest.approx(1.0, abs=1e-5)
