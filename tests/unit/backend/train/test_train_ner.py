"""The NER task end to end on a tiny random encoder (the real MiniLM tokenizer): a run's result
is true to what ran, the session keeps the model (tag a sentence, download it), Stop keeps no
half-trained model, and everything that crosses a ZeroGPU worker pickles."""

from __future__ import annotations

import json
import pickle
import zipfile

import pytest

from backend.engines.ner import metrics as ner_metrics
from backend.runtime.errors import InputError
from backend.train import api, ner_api, ner_gpu, ner_upload, ner_use, use
from backend.train import store as train_store
from backend.train.store import TrainStore
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

RUN = dict(epochs=1, max_sentences=16, batch_size=8, learning_rate=1e-3)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny(tiny_bert(seed=0), minilm_tokenizer(), tmp_path_factory.mktemp("tiny_ner_embedder"))


@pytest.fixture
def tiny(monkeypatch, tiny_dir):
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(tiny_dir))
    monkeypatch.setattr(train_store.STORE, "_value", TrainStore())
    return tiny_dir


def test_a_run_reports_what_ran_and_the_scores_recompute_from_its_predictions(tiny):
    events = list(ner_api.train_iter("s1", **RUN))
    kinds = [e["event"] for e in events]
    assert kinds[0] == "estimate" and kinds.count("step") == 2 and kinds[-1] == "done"
    assert [e["step"] for e in events if e["event"] == "step"] == [1, 2]
    r = events[-1]["result"]
    json.dumps(r)  # plain JSON
    assert r["task"] == "ner" and not r["stopped"] and r["steps"] == r["total_steps"] == 2
    assert r["train_sentences"] == 16 and r["epochs"] == 1 and r["model"]["checkpoint"] == str(tiny)
    assert r["test"]["split"] == "test" and r["validation"]["split"] == "validation"
    assert r["confusion"]["split"] == "test" and r["errors"]["split"] == "validation"
    ds = ner_upload.load("shipped")
    preds = r["predictions"]["test"]
    assert [p["tokens"] for p in preds] == [s.tokens for s in ds.test]
    assert [p["gold"] for p in preds] == [s.tags for s in ds.test]
    again = ner_metrics.report([p["gold"] for p in preds], [p["pred"] for p in preds])
    assert r["test"]["overall"]["f1"] == round(again["overall"]["f1"], 4)
    assert set(r["test"]["per_type"]) == set(again["per_type"])
    counts = r["confusion"]["counts"]
    assert sum(map(sum, counts)) == sum(len(s.tokens) for s in ds.test)  # every test word counted once
    losses = [row["loss"] for row in r["errors"]["rows"]]
    assert losses == sorted(losses, reverse=True) and len(losses) == 10 and r["errors"]["of"] == len(ds.validation)
    assert "max_sentences" in " ".join(r["dataset"]["notes"])
    assert r["estimate"]["estimated_s"] == r["plan"]["seconds"]


def test_the_session_tags_text_downloads_and_refuses_classifier_calls(tiny, tmp_path):
    ner_api.train("s2", **RUN)
    p = ner_use.predict("s2", "Angela Merkel visited Paris.")
    assert p["tokens"] == ["Angela", "Merkel", "visited", "Paris", "."] and len(p["tags"]) == 5
    for e in p["entities"]:
        assert p["text"][e["start"]:e["end"]] == e["word"] and 0 < e["score"] <= 1
    assert p["model"]["source"] == "session" and p["model"]["steps"] == 2
    z = ner_use.export("s2", root=str(tmp_path))
    with zipfile.ZipFile(z["path"]) as f:
        names = {n.split("/", 1)[1] for n in f.namelist()}
        card = f.read(next(n for n in f.namelist() if n.endswith("README.md"))).decode()
    assert {"README.md", "config.json", "model.safetensors", "head.safetensors", "labels.json", "ner.json"} <= names
    assert "token-classification" in card and "2 steps" in card
    with pytest.raises(InputError, match="is a token classifier \\(NER\\), not a text classifier"):
        api.predict_trained("s2", "hello")
    with pytest.raises(InputError, match="not a text classifier"):
        use.use_trained("s2", True)
    with pytest.raises(InputError, match="not a text classifier"):
        use.export("s2", root=str(tmp_path))
    with pytest.raises(InputError, match="No trained model in this session yet"):
        ner_use.predict("nobody", "Paris")
    with pytest.raises(InputError, match="text must not be empty|empty"):
        ner_use.predict("s2", "   ")


def test_a_classifier_session_is_not_an_ner_model(tiny, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n" + "\n".join(f"good day {i},pos\nbad night {i},neg" for i in range(8)))
    api.train("s3", "upload", str(path), methods="probe", learning_curve=False)
    with pytest.raises(InputError, match="text classifier, not a token classifier"):
        ner_use.predict("s3", "Paris")


def test_stop_ends_the_run_and_keeps_no_half_trained_model(tiny):
    ner_api.train("s4", **RUN)  # a finished model first: Stop must not replace it
    before = train_store.get_store().trained("s4")
    gen = ner_api.train_iter("s4", epochs=3, max_sentences=200, batch_size=2, learning_rate=1e-3)  # 300 steps
    steps = []
    for ev in gen:
        if ev["event"] == "step":
            steps.append(ev["step"])
            api.stop("s4")
        if ev["event"] == "done":
            r = ev["result"]
    assert r["stopped"] and "no model was kept" in r["note"]
    assert 1 <= len(steps) < 300 and "steps" not in r
    assert train_store.get_store().trained("s4") is before
    assert not train_store.get_store().session("s4").running


def test_what_crosses_a_zerogpu_worker_pickles(tiny):
    a = ner_api.check_args(**RUN)
    ds, train = ner_api._data(a)
    data = {"train": train[:4], "validation": ds.validation[:3], "test": ds.test[:3]}
    args = ("run-1", None, data, ds.labels, a.recipe, 60.0)
    pickle.dumps(args)
    events = list(ner_gpu.train_stream(*args))
    for ev in events:
        pickle.loads(pickle.dumps(ev))
    assert events[-1]["event"] == "trained" and events[-1]["steps"] == 1
    assert set(events[-1]["weights"]) and all(v.device.type == "cpu" for v in events[-1]["weights"].values())


def test_an_evicted_ner_model_is_named_as_what_it_is():
    """The message a visitor gets after eviction names the kind of model they trained."""
    s = train_store.Session()
    assert train_store._describe(s) == "model"
    s.trained = ner_use.NerTrained(labels=["O", "B-PER"], dataset={"name": "ner"}, checkpoint="m", override=None)
    assert train_store._describe(s) == "token classifier (NER) trained on 'ner'"
    s.trained = train_store.Trained(labels=["a", "b"], dataset={"name": "emotion"}, checkpoint="m", override=None)
    assert train_store._describe(s) == "classifier trained on 'emotion'"
