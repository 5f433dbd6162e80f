"""The NER task's inputs and figures, no model: uploads (CoNLL, JSONL tokens, JSONL spans) and
hostile ones, the confusion counts and the error-analysis ranking checked by hand, the plan."""

from __future__ import annotations

import json
import math

import pytest

from backend.runtime import budget as request_budget
from backend.runtime.errors import InputError
from backend.runtime.rates import RATES
from backend.train import ner_api, ner_plan, ner_results, ner_upload
from backend.engines.ner.token_classification import Recipe

SENT = [("Angela", "B-PER"), ("Merkel", "I-PER"), ("visited", "O"), ("Paris", "B-LOC"), (".", "O")]


def _conll(n=12, docstart=True, sep=" "):
    lines = ["-DOCSTART- -X- O O", ""] if docstart else []
    for _ in range(n):
        lines += [f"{w}{sep}NNP{sep}{t}" for w, t in SENT] + [""]
    return "\n".join(lines)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


# ----------------------------------------------------------------------------- good uploads
def test_conll_columns_last_is_the_tag_docstart_skipped_and_split_70_15_15(tmp_path):
    ds = ner_upload.read_upload(_write(tmp_path, "a.conll", _conll(20)))
    assert ds.source == "upload" and ds.labels == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    assert {k: len(ds.split(k)) for k in ("train", "validation", "test")} == {"train": 14, "validation": 3, "test": 3}
    s = ds.train[0]
    assert s.tokens == [w for w, _ in SENT] and s.tags == [t for _, t in SENT]
    d = ds.describe()
    assert d["types"] == ["PER", "LOC"] and d["entities"]["train"] == {"LOC": 14, "PER": 14}
    assert "Split 70/15/15" in d["notes"][0]


def test_tab_separated_conll_reads_the_same(tmp_path):
    a = ner_upload.read_upload(_write(tmp_path, "a.txt", _conll(12, sep="\t")))
    b = ner_upload.read_upload(_write(tmp_path, "b.txt", _conll(12)))
    assert [s.tags for s in a.train] == [s.tags for s in b.train]


def test_jsonl_tokens_and_spans_become_bio_words(tmp_path):
    rows = [{"tokens": [w for w, _ in SENT], "tags": [t for _, t in SENT]}] * 10
    ds = ner_upload.read_upload(_write(tmp_path, "t.jsonl", "\n".join(json.dumps(r) for r in rows)))
    assert ds.labels == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    text = "Dr. Jane O'Neil joined Acme-Corp in New York, said Reuters."
    spans = {"text": text, "entities": [
        {"start": text.index("Jane"), "end": text.index(" joined"), "label": "per"},
        {"start": text.index("Acme"), "end": text.index(" in"), "label": "ORG"},
        {"start": text.index("New"), "end": text.index(","), "label": "LOC"}]}
    sents = ner_upload.parse(json.dumps(spans), "jsonl")
    # Words and punctuation: a final '.' is its own word, joined ones (O'Neil, Acme-Corp) stay whole.
    assert sents[0].tokens == ["Dr", ".", "Jane", "O'Neil", "joined", "Acme-Corp", "in", "New", "York", ",", "said",
                               "Reuters", "."]
    assert sents[0].tags == ["O", "O", "B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "I-LOC", "O", "O", "O", "O"]


# ----------------------------------------------------------------------------- hostile uploads
@pytest.mark.parametrize("name, text, message", [
    ("a.conll", "", "The file is empty"),
    ("a.conll", "-DOCSTART- -X- O O\n\n", "no tagged sentences"),
    ("a.conll", "Angela B-PER\nMerkel\n", "line 2: expected a word and a tag"),
    ("a.conll", "Angela NNP\nMerkel NNP\n", "'NNP' is not a BIO tag"),
    ("a.conll", "Angela PER\n", "'PER' is not a BIO tag"),
    ("a.conll", "\n".join(f"w{i} O" for i in range(201)), "201 tokens; at most 200"),
    ("a.conll", _conll(3), "Only 3 sentence(s): at least 10"),
    ("a.conll", "\n\n".join("a O\nb O" for _ in range(12)), "every tag is O"),
    ("a.conll", "\n\n".join(f"w B-T{i}" for i in range(21)), "21 entity types"),
    ("a.txt", '{"tokens": ["a"], "tags": ["O"]}', "looks like JSON Lines"),
    ("a.jsonl", '{"tokens": ["a", "b"], "tags": ["O"]}', "2 tokens but 1 tags"),
    ("a.jsonl", '{"words": ["a"], "labels": ["O"]}', "expected an object with 'tokens' and 'tags'"),
    ("a.jsonl", '{"tokens": ["a b"], "tags": ["O"]}', "without spaces"),
    ("a.jsonl", "{not json", "line 1: not valid JSON"),
    ("a.jsonl", '{"text": "Hello Berlin", "entities": [{"start": 6, "end": 9, "label": "LOC"}]}',
     "does not start and end on word boundaries"),
    ("a.jsonl", '{"text": "New York", "entities": [{"start": 0, "end": 8, "label": "LOC"}, '
                '{"start": 4, "end": 8, "label": "LOC"}]}', "entities overlap"),
    ("a.jsonl", '{"text": "x", "entities": [{"start": "0", "end": 1, "label": "LOC"}]}', "integer start < end"),
    ("a.csv", "text,label\n", "'.csv' files are not read here"),
])
def test_hostile_uploads_get_a_readable_error(tmp_path, name, text, message):
    with pytest.raises(InputError) as err:
        ner_upload.read_upload(_write(tmp_path, name, text))
    assert message in str(err.value)


def test_binary_too_big_and_missing_files_are_refused(tmp_path, monkeypatch):
    p = tmp_path / "x.conll"
    p.write_bytes(b"\x00\x01\x02PK")
    with pytest.raises(InputError, match="not text"):
        ner_upload.read_upload(str(p))
    p.write_bytes("Zürich B-LOC".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        ner_upload.read_upload(str(p))
    monkeypatch.setattr(ner_upload.ner_data, "MAX_UPLOAD_BYTES", 10)
    p.write_text(_conll(12))
    with pytest.raises(InputError, match="at most 0 MB"):
        ner_upload.read_upload(str(p))
    with pytest.raises(InputError, match="no file came"):
        ner_upload.read_upload(None)


def test_deep_json_and_lone_surrogates_are_handled(tmp_path):
    deep = '{"tokens": ' + "[" * 5000 + "]" * 5000 + ', "tags": []}'
    with pytest.raises(InputError, match="line 1"):
        ner_upload.read_upload(_write(tmp_path, "deep.jsonl", deep))
    row = json.dumps({"tokens": ["Bob", "\ud800x"], "tags": ["B-PER", "O"]})
    ds = ner_upload.read_upload(_write(tmp_path, "s.jsonl", "\n".join([row] * 10)))
    assert all(s.tokens[1] == "\ufffdx" for s in ds.train)


def test_too_many_sentences_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(ner_upload.ner_data, "MAX_SENTENCES", 5)
    with pytest.raises(InputError, match="More than 5 sentences"):
        ner_upload.read_upload(_write(tmp_path, "a.conll", _conll(12)))
    rows = "\n".join(json.dumps({"tokens": ["a"], "tags": ["B-X"]}) for _ in range(7))
    with pytest.raises(InputError, match="More than 5 sentences"):
        ner_upload.read_upload(_write(tmp_path, "a.jsonl", rows))


def test_parameters_are_checked_by_name():
    with pytest.raises(InputError, match="source must be one of shipped, upload"):
        ner_api.check_args(source="conll2003")
    with pytest.raises(InputError, match="epochs must be"):
        ner_api.check_args(epochs=0)
    with pytest.raises(InputError, match="learning_rate must be between"):
        ner_api.check_args(learning_rate=1.0)
    with pytest.raises(InputError, match="file must be an uploaded file"):
        ner_api.check_args(source="upload", file={"path": 3})
    a = ner_api.check_args(word_shapes=False, epochs=2, batch_size=8)
    assert a.recipe.shape_dim == 0 and not a.recipe.shape_input and a.recipe.epochs == 2 and a.recipe.batch_size == 8


# ----------------------------------------------------------------------------- the figures, by hand
def test_confusion_counts_by_hand():
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-LOC", "I-LOC"]]
    pred = [["B-PER", "O", "O", "B-PER"], ["O", "B-LOC", "B-LOC"]]
    c = ner_results.confusion(gold, pred, labels, "test")
    # O: 2 words, both O. B-PER: 1 -> B-PER. I-PER: 1 -> O. B-LOC: 2 -> one B-PER, one B-LOC. I-LOC: 1 -> B-LOC.
    assert c["counts"] == [[2, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 0, 0, 0, 0], [0, 1, 0, 1, 0], [0, 0, 0, 1, 0]]
    assert c["normalised"][3] == [0.0, 0.5, 0.0, 0.5, 0.0] and c["words"] == 7 and c["split"] == "test"


def test_error_analysis_ranks_by_loss_and_marks_the_differing_words():
    sents = [["a", "b"], ["Paris", "is", "nice"], ["Bob", "runs"]]
    gold = [["O", "O"], ["B-LOC", "O", "O"], ["B-PER", "O"]]
    pred = [["O", "O"], ["B-PER", "O", "O"], ["B-PER", "B-LOC"]]
    e = ner_results.error_analysis(sents, gold, pred, [0.1, 2.5, 0.75], "validation", k=2)
    assert e["split"] == "validation" and e["of"] == 3
    assert [r["index"] for r in e["rows"]] == [1, 2]
    assert e["rows"][0] == {"index": 1, "loss": 2.5, "tokens": sents[1], "gold": gold[1], "pred": pred[1],
                            "differs": [True, False, False], "wrong_words": 1}
    assert e["rows"][1]["differs"] == [False, True]


def test_scores_keep_the_split_and_round():
    rep = {"overall": {"precision": 2 / 3, "recall": 1.0, "f1": 0.8, "support": 2, "predicted": 3, "correct": 2},
           "per_type": {"PER": {"precision": 1 / 3, "recall": 1.0, "f1": 0.5, "support": 1, "predicted": 3,
                                "correct": 1}}}
    s = ner_results.scores(rep, "test")
    assert s["split"] == "test" and s["overall"]["precision"] == 0.6667 and s["per_type"]["PER"]["support"] == 1


# ----------------------------------------------------------------------------- the plan
def test_plan_counts_steps_and_says_when_it_is_a_guess(monkeypatch):
    for work in (ner_plan.TRAIN_WORK, ner_plan.SCORE_WORK):
        RATES.forget(ner_plan.key(work, "plan-test"))
    ds = ner_upload.load("shipped")
    p = ner_plan.plan(ds.train[:40], ds.validation, ds.test, Recipe(epochs=3, batch_size=16), "plan-test")
    assert p["steps"] == 9 and p["steps_per_epoch"] == 3 and not p["measured"]
    assert p["basis"].startswith("rough guess for")
    RATES.add(ner_plan.key(ner_plan.TRAIN_WORK, "plan-test"), 1000, 1.0)
    RATES.add(ner_plan.key(ner_plan.SCORE_WORK, "plan-test"), 1000, 0.5)
    p = ner_plan.plan(ds.train[:40], ds.validation, ds.test, Recipe(epochs=3, batch_size=16), "plan-test")
    train_words = sum(len(s.tokens) for s in ds.train[:40]) * 3
    train = next(q for q in p["parts"] if q["part"] == "train")
    assert train["measured"] and train["estimated_s"] == pytest.approx(train_words / 1000, abs=0.01)


def test_a_plan_over_the_budget_is_refused_before_any_model_loads(monkeypatch):
    with request_budget.scope(seconds=0.5):
        with pytest.raises(InputError) as err:
            next(ner_api.train_iter("s-budget", epochs=20))
    msg = str(err.value)
    assert "this request has 0 s" in msg and "TLAB_TIME_BUDGET_S" in msg and "steps" in msg
    with request_budget.scope(seconds=0.5):
        e = ner_api.estimate(epochs=20)
    assert e["fits_budget"] is False and e["advice"] == msg.replace("0 s.", "0 s.")
    assert math.isfinite(e["seconds"]) and e["dataset"]["sizes"]["train"] > 400
