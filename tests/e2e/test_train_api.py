"""/train and /predict_trained through gradio_client: a tiny budget, readable errors, sessions."""

from __future__ import annotations

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

ARGS = dict(dataset="sentiment", file=None, text_column="", label_column="",
            methods=["zero_shot", "probe", "finetune"], epochs=1, max_examples=16, max_seconds=5,
            learning_rate=1e-4, batch_size=8, learning_curve=True, curve_finetune=False, seed=0)


def test_train_then_predict_in_the_same_session(client):
    *_, result = client.predict(**ARGS, api_name="/train")
    assert set(result["methods"]) == {"zero_shot", "probe", "finetune"}
    assert result["dataset"]["sizes"] == {"train": 380, "validation": 82, "test": 82}
    assert result["methods"]["finetune"]["examples"] == 15  # 16 capped evenly: 5 per label
    assert result["learning_curve"]["sizes"] == [8, 16, 32, 64, 128, "all"]  # 128 < the largest label (137 negatives)
    assert result["methods"]["probe"]["accuracy"] > 0.7
    assert "MiniLM" in result["model"]["checkpoint"]
    html, pred = client.predict(text="Great value, works perfectly.", method="probe", api_name="/predict_trained")
    assert pred["method"] == "probe" and pred["labels"][0] == "positive" and "positive" in html


def test_a_new_session_has_no_model(app_url):
    fresh = Client(app_url, verbose=False)
    with pytest.raises(AppError, match="No trained model in this session yet"):
        fresh.predict(text="hello there", method="", api_name="/predict_trained")


def test_bad_upload_is_a_readable_error(client, tmp_path):
    bad = tmp_path / "one_label.csv"
    bad.write_text("text,label\n" + "\n".join(f"sentence {i},spam" for i in range(12)))
    with pytest.raises(AppError, match="a classifier needs at least two labels"):
        client.predict(**{**ARGS, "dataset": "upload", "file": handle_file(str(bad))}, api_name="/train")
    with pytest.raises(AppError, match="learning_rate must be between 1e-07 and 0.01, got 1"):
        client.predict(**{**ARGS, "learning_rate": 1.0}, api_name="/train")


def test_use_in_pipelines_changes_only_this_sessions_classify(app_url):
    from gradio_client import Client

    mine, other = Client(app_url, verbose=False), Client(app_url, verbose=False)
    mine.predict(**{**ARGS, "methods": ["probe"], "learning_curve": False}, api_name="/train")
    note, r = mine.predict(on=True, method="", api_name="/use_trained")
    assert r["in_use"] and r["model"]["checkpoint"].startswith("your classifier trained on sentiment, test acc 0.")
    text = "The delivery was late and the package arrived damaged. Very disappointing."
    badge, *_, out = mine.predict(text=text, api_name="/classify")
    assert out["method"] == "session-trained" and out["model"]["source"] == "session"
    assert out["results"][0]["labels"][0] == "negative" and "your classifier trained on sentiment" in badge
    *_, theirs = other.predict(text=text, api_name="/classify")
    assert theirs["method"] == "fine-tuned" and theirs["results"][0]["labels"][0] == "NEGATIVE"
    note, r = mine.predict(on=False, api_name="/use_trained")
    assert r["in_use"] is False
    *_, back = mine.predict(text=text, api_name="/classify")
    assert back["method"] == "fine-tuned"
    with pytest.raises(AppError, match="No trained model in this session yet"):
        other.predict(on=True, api_name="/use_trained")


def test_download_gives_a_zip_with_a_model_card(client):
    import zipfile

    client.predict(**{**ARGS, "methods": ["probe"], "learning_curve": False}, api_name="/train")
    path, note = client.predict(method="probe", api_name="/download_trained")
    with zipfile.ZipFile(path) as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
        card = z.read(next(n for n in z.namelist() if n.endswith("README.md"))).decode()
    assert {"README.md", "config.json", "model.safetensors", "probe.safetensors", "labels.json"} <= names
    assert "sentiment" in card and "feature extraction + logistic regression" in card and "accuracy 0." in card
    assert "MB" in note
