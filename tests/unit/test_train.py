"""Training on tiny random models: scores, the probe, uploads, the fine-tuning loop, Stop,
budgets, and sessions that never see each other's models."""

from __future__ import annotations

import json
import re
import threading

import numpy as np
import pytest

from backend.runtime.errors import InputError
from backend.train import api, gpu, probe as P
from backend.engines.classify import datasets as D, finetune as FT, metrics as M
from backend.train import store as train_store
from backend.train.store import TrainStore, Trained
from tests.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

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


def _csv(tmp_path, rows, name="data.csv", header="text,label"):
    p = tmp_path / name
    p.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return str(p)


def _toy_rows(n=8):
    return [f"{t},pos" for t in POS[:n]] + [f"{t},neg" for t in NEG[:n]]


# ----------------------------------------------------------------------------- metrics + probe
def test_metrics_exact_on_a_small_case():
    y_true, y_pred = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 0]
    m = M.confusion(y_true, y_pred, 3)
    assert m.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
    assert M.accuracy(y_true, y_pred) == pytest.approx(4 / 6)
    # F1 per label: 0: p=1/2 r=1/2 -> 0.5; 1: p=2/3 r=1 -> 0.8; 2: p=1 r=1/2 -> 2/3
    assert M.macro_f1(y_true, y_pred, 3) == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)
    assert M.normalise_rows(m).tolist() == [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]
    probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    hard = M.hardest(["a", "b", "c"], np.array([0, 1, 1]), probs, ["x", "y"], k=1)
    assert hard == [{"text": "c", "true": "y", "predicted": "x", "loss": round(-np.log(0.4), 4), "p_true": 0.4}]


def test_probe_separates_separable_data_and_is_deterministic():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(-2, 1, (40, 5)), rng.normal(2, 1, (40, 5))]).astype(np.float32)
    y = np.array([0] * 40 + [1] * 40)
    a, b = P.fit(x, y, 2), P.fit(x, y, 2)
    assert M.accuracy(y, a.predict_proba(x).argmax(1)) == 1.0
    np.testing.assert_array_equal(a.weight, b.weight)
    assert np.allclose(a.predict_proba(x).sum(1), 1.0)


# ----------------------------------------------------------------------------- uploads
def test_upload_splits_each_label_70_15_15_with_a_fixed_seed(tmp_path):
    rows = [f"text number {i},{'a' if i % 2 else 'b'}" for i in range(40)]
    ds = D.read_upload(_csv(tmp_path, rows))
    assert ds.labels == ["a", "b"]
    assert ds.counts() == {"train": {"a": 14, "b": 14}, "validation": {"a": 3, "b": 3}, "test": {"a": 3, "b": 3}}
    assert D.read_upload(_csv(tmp_path, rows)).train == ds.train


def test_upload_split_column_is_used_as_given(tmp_path):
    p = tmp_path / "d.jsonl"
    lines = [{"text": f"t{i}", "label": "ab"[i % 2], "split": ["train", "train", "validation", "test"][i % 4]}
             for i in range(24)]
    p.write_text("\n".join(json.dumps(r) for r in lines))
    ds = D.read_upload(str(p))
    assert (len(ds.train), len(ds.validation), len(ds.test)) == (12, 6, 6)


@pytest.mark.parametrize("content,name,message", [
    ("words,stars\nnice,5\n", "d.csv", "No text column found"),
    ("text,stars\nnice,5\n", "d.csv", "No label column found"),
    ("text,label\n" + "\n".join(f"t{i},pos" for i in range(10)), "d.csv", "a classifier needs at least two labels"),
    ("text,label\n" + "\n".join(f"t{i},pos" for i in range(10)) + "\nx,neg\ny,neg", "d.csv",
     "Too few examples for 'neg' (2): each label needs at least 5"),
    ('{"text": "a", "label": "x"}\n{"text": "b", "label": \n', "d.jsonl", "Line 2 of the JSONL file is not valid JSON"),
    ('["a", "x"]\n', "d.jsonl", "Line 1 of the JSONL file is not an object"),
    ('text,label\n"unclosed,pos\n', "d.csv", "The CSV file is malformed"),
    ("text,label\na,b,c\n", "d.csv", "Line 2 of the CSV has more cells than the header"),
    ("", "d.csv", "The file is empty"),
    ("text,label\n", "d.txt", "'.txt' files are not read here"),
])
def test_bad_uploads_say_what_is_wrong(tmp_path, content, name, message):
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(message)):
        D.read_upload(str(p))


def test_named_columns_binary_and_huge_files(tmp_path, monkeypatch):
    p = _csv(tmp_path, [f"{t},pos,x" for t in POS[:6]] + [f"{t},neg,x" for t in NEG[:6]], header="body,tag,other")
    assert D.read_upload(p, "body", "tag").labels == ["neg", "pos"]
    with pytest.raises(InputError, match="no column 'words' for the text. Its columns are: body, tag, other"):
        D.read_upload(p, "words", "tag")
    binary = tmp_path / "x.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8 text"):
        D.read_upload(str(binary))
    monkeypatch.setattr(D, "MAX_UPLOAD_BYTES", 100)
    with pytest.raises(InputError, match="at most 0 MB"):
        D.read_upload(p, "body", "tag")
    with pytest.raises(InputError, match="No file uploaded"):
        D.read_upload(None)


def test_subsample_and_cap_are_stratified_and_seeded():
    rows = [(f"t{i}", i % 3) for i in range(60)]
    sub = D.subsample(rows, 4, seed=1)
    assert sorted(np.bincount([y for _, y in sub]).tolist()) == [4, 4, 4]
    assert sub == D.subsample(rows, 4, seed=1)
    assert len(D.cap_examples(rows, 30)) == 30


# ----------------------------------------------------------------------------- fine-tuning
def _worker():
    """The Train tab's worker: each chunk a (fake) GPU task on the embedder role, here the tiny model."""
    return gpu.HubWorker()


def _toy(n=8):
    train = [(t, 1) for t in POS[:n]] + [(t, 0) for t in NEG[:n]]
    return train, [(POS[0], 1), (NEG[0], 0)]


def test_fine_tuning_decreases_the_loss(tiny):
    train, val = _toy()
    budget = FT.Budget(epochs=12, max_seconds=3600, learning_rate=1e-3, batch_size=4, seed=0)
    gen = FT.run(train, val, 2, budget, _worker())
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            out = done.value
            break
    assert out.stopped == "finished" and out.steps == out.total_steps == 48
    first, last = np.mean(out.losses[:4]), np.mean(out.losses[-4:])
    assert last < 0.5 * first, (first, last)
    assert [e["event"] for e in events][0] == "estimate"
    assert sum(e["event"] == "epoch" for e in events) == 12
    assert out.weights is not None and out.best_val["accuracy"] == 1.0


def test_same_seed_same_losses(tiny):
    train, val = _toy(4)
    budget = FT.Budget(epochs=2, max_seconds=3600, learning_rate=1e-3, batch_size=4, seed=3)
    runs = []
    for _ in range(2):
        gen = FT.run(train, val, 2, budget, _worker())
        try:
            while True:
                next(gen)
        except StopIteration as done:
            runs.append(done.value.losses)
    assert runs[0] == runs[1]


def test_stop_keeps_the_model_so_far(tiny):
    train, val = _toy()
    stop = threading.Event()
    gen = FT.run(train, val, 2, FT.Budget(epochs=10, max_seconds=3600, batch_size=4), _worker(), stop)
    steps = 0
    while True:
        try:
            ev = next(gen)
        except StopIteration as done:
            out = done.value
            break
        if ev["event"] == "step":
            steps = ev["step"]
            stop.set()  # the Stop button, pressed after the first chunk
    assert out.stopped == "stopped"
    assert out.steps == steps == FT.FIRST_CHUNK_STEPS < out.total_steps
    # No validation pass after Stop: the last state is kept, unscored.
    assert out.weights is not None and out.epochs == [] and out.best_val is None and out.best_epoch == 0.5
    probs, pooled = FT.predict_proba(_worker(), out.weights, ["good day", "bad night"], 2)
    assert probs.shape == (2, 2) and np.allclose(probs.sum(1), 1.0) and pooled.shape == (2, 32)


def test_stop_before_the_first_step_leaves_no_model(tiny):
    stop = threading.Event()
    stop.set()
    gen = FT.run(*_toy(), 2, FT.Budget(), _worker(), stop)
    with pytest.raises(StopIteration) as done:
        next(gen)
    assert done.value.value.weights is None and done.value.value.stopped == "stopped"


def test_the_time_budget_stops_the_run(tiny):
    gen = FT.run(*_toy(), 2, FT.Budget(epochs=50, max_seconds=0.5, batch_size=2), _worker())
    try:
        while True:
            next(gen)
    except StopIteration as done:
        out = done.value
    assert out.stopped == "time budget" and out.steps < out.total_steps and out.weights is not None


# ----------------------------------------------------------------------------- entry points + sessions
def test_train_compares_methods_and_the_session_keeps_the_model(tiny, tmp_path):
    path = _csv(tmp_path, _toy_rows())
    r = api.train("s1", "upload", path, methods="zero_shot,probe,finetune", epochs=2, max_seconds=60,
                  batch_size=4, learning_rate=1e-3)
    assert set(r["methods"]) == {"zero_shot", "probe", "finetune"}
    for m in r["methods"].values():
        assert 0 <= m["accuracy"] <= 1 and len(m["confusion"]["normalised"]) == 2
    assert r["dataset"]["labels"] == ["neg", "pos"] and r["model"]["checkpoint"] == str(tiny)
    assert r["learning_curve"]["sizes"] == ["all"]  # 6 train examples per label: below 8
    # Fine-tuning ran: the frozen and fine-tuned maps show the same (test) texts, before and after.
    assert r["map"]["texts"] == r["map_finetuned"]["texts"] and set(r["map"]["labels"]) == {"neg", "pos"}
    assert r["map"]["of"].endswith("(test split)") and r["map"]["label_names"] == ["neg", "pos"]
    assert r["best_method"] in ("probe", "finetune")
    json.dumps(r)  # JSON-able
    p = api.predict_trained("s1", "good lovely fun")
    assert p["labels"] and set(p["labels"]) == {"neg", "pos"} and p["method"] == r["best_method"]
    assert api.predict_trained("s1", "bad", method="finetune")["method"] == "finetune"


def test_two_sessions_never_see_each_others_models(tiny, tmp_path):
    r = api.train("a", "upload", _csv(tmp_path, _toy_rows(), "a.csv"), methods=["probe"], learning_curve=False)
    assert len(r["map"]["x"]) == 12 and r["map"]["of"].endswith("(train split)")  # no fine-tuning: the train split
    with pytest.raises(InputError, match="No trained model in this session yet"):
        api.predict_trained("b", "good day")
    rows = [f"{t},happy" for t in POS[:6]] + [f"{t},sad" for t in NEG[:6]] + [f"{t} {t},mixed" for t in POS[:6]]
    api.train("b", "upload", _csv(tmp_path, rows, "b.csv"), methods=["probe"], learning_curve=False)
    assert set(api.predict_trained("a", "good day")["labels"]) == {"neg", "pos"}
    assert set(api.predict_trained("b", "good day")["labels"]) == {"happy", "mixed", "sad"}
    with pytest.raises(InputError, match="no 'finetune' classifier"):
        api.predict_trained("a", "good", method="finetune")
    api.drop_session("a")
    with pytest.raises(InputError, match="No trained model"):
        api.predict_trained("a", "good day")


def test_bad_requests_fail_before_any_model_loads(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr("backend.hub.load", lambda *a, **k: pytest.fail("a model was loaded"))
    with pytest.raises(InputError, match="Unknown method"):
        api.train("s", "emotion", methods="magic")
    with pytest.raises(InputError, match="epochs must be between 1 and 20"):
        api.train("s", "emotion", epochs=0)
    with pytest.raises(InputError, match="max_seconds must be a finite number"):
        api.train("s", "emotion", max_seconds=float("nan"))
    with pytest.raises(InputError, match="Unknown dataset"):
        api.train("s", "imdb")
    with pytest.raises(InputError, match="Too few examples"):
        api.train("s", "upload", _csv(tmp_path, [f"{t},pos" for t in POS] + ["x,neg"]))


def test_one_run_at_a_time_per_session_and_stop_flag():
    store = TrainStore()
    store.begin("s")
    with pytest.raises(InputError, match="already going in this session"):
        store.begin("s")
    assert store.request_stop("s") is True and store.session("s").stop.is_set()
    store.end("s", None)
    assert store.begin("s").stop.is_set() is False  # a new run starts with the flag cleared


def _trained(mb: int) -> Trained:
    import torch

    return Trained(labels=["a", "b"], dataset={"name": "x"}, checkpoint="c", override=None,
                   weights={"w": torch.zeros(mb * 1024 * 1024 // 4)}, best="finetune")


def test_store_evicts_idle_sessions_and_stays_within_its_memory_budget():
    store = TrainStore(idle_s=100, max_sessions=10, max_bytes=3 * 1024 * 1024)
    for sid in ("a", "b", "c"):
        store.begin(sid)
        store.end(sid, _trained(1))
    assert store.bytes_used() == 3 * 1024 * 1024
    store.begin("d")
    store.end("d", _trained(1))  # over budget: the least recently used model goes
    assert store.session("a").trained is None and store.session("d").trained is not None
    assert store.bytes_used() <= 3 * 1024 * 1024
    gone = store.evict(now=store.session("d").last_used + 1000)
    assert set(gone) >= {"b", "c"}
