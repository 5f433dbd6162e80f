"""/train_ner, /predict_ner and /download_ner through gradio_client on the real MiniLM: one epoch
on a slice of the shipped set, a result true to itself (the F1 recomputes from the returned
predictions), the session's model used and downloaded, readable errors."""

from __future__ import annotations

import zipfile

import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError

from backend.engines.ner import metrics as ner_metrics

ARGS = dict(source="shipped", file=None, epochs=1, max_sentences=64, learning_rate=None, batch_size=16,
            word_shapes=True, seed=0)


@pytest.fixture(scope="module")
def trained(client):
    *_, result = client.predict(**ARGS, api_name="/train_ner")
    return result


def test_one_epoch_on_a_slice_reports_per_type_scores_true_to_its_predictions(trained):
    r = trained
    assert r["task"] == "ner" and not r["stopped"] and r["steps"] == r["total_steps"] == 4  # 64 / 16
    assert r["train_sentences"] == 64 and "MiniLM" in r["model"]["checkpoint"]
    assert r["test"]["split"] == "test" and set(r["test"]["overall"]) >= {"precision", "recall", "f1", "support"}
    assert set(r["test"]["per_type"]) <= {"PER", "ORG", "LOC", "MISC"} and r["test"]["per_type"]
    for scores in r["test"]["per_type"].values():
        assert {"precision", "recall", "f1", "support", "predicted", "correct"} <= set(scores)
    preds = r["predictions"]["test"]
    assert len(preds) == r["dataset"]["sizes"]["test"]
    again = ner_metrics.report([p["gold"] for p in preds], [p["pred"] for p in preds])
    assert r["test"]["overall"]["f1"] == round(again["overall"]["f1"], 4)
    for t, s in again["per_type"].items():
        assert r["test"]["per_type"][t]["f1"] == round(s["f1"], 4)
    c = r["confusion"]
    assert c["counts"] == ner_metrics.confusion([p["gold"] for p in preds], [p["pred"] for p in preds], c["labels"])
    assert r["errors"]["split"] == "validation" and len(r["errors"]["rows"]) == 10
    assert r["estimate"]["estimated_s"] == r["plan"]["seconds"]


def test_the_session_tags_text_and_downloads_its_model(client, trained):
    html, p = client.predict(text="Angela Merkel met Emmanuel Macron in Berlin.", api_name="/predict_ner")
    assert p["tokens"][:2] == ["Angela", "Merkel"] and len(p["tags"]) == len(p["tokens"])
    assert p["model"]["steps"] == trained["steps"] and p["model"]["test_f1"] == trained["test"]["overall"]["f1"]
    assert "train-ner-tagged" in html
    path, note = client.predict(api_name="/download_ner")
    path = path["value"] if isinstance(path, dict) else path
    with zipfile.ZipFile(path) as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
    assert {"README.md", "model.safetensors", "head.safetensors", "labels.json", "ner.json"} <= names
    assert "MB" in note
    with pytest.raises(AppError, match="token classifier \\(NER\\), not a text classifier"):
        client.predict(text="hello", method="", api_name="/predict_trained")


def test_bad_input_is_a_readable_error(client, tmp_path):
    bad = tmp_path / "pos.conll"
    bad.write_text("\n\n".join("Angela NNP\nMerkel NNP" for _ in range(12)))
    with pytest.raises(AppError, match="'NNP' is not a BIO tag"):
        client.predict(**{**ARGS, "source": "upload", "file": handle_file(str(bad))}, api_name="/train_ner")
    with pytest.raises(AppError, match="no file came"):
        client.predict(**{**ARGS, "source": "upload"}, api_name="/train_ner")
    with pytest.raises(AppError, match="To fit: .*TLAB_TIME_BUDGET_S"):
        client.predict(**{**ARGS, "epochs": 20, "max_sentences": 0}, api_name="/train_ner")
