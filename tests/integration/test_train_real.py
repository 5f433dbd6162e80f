"""Training with the real all-MiniLM-L6-v2 on the shipped sets: what the book's chapter 2 claims."""

from __future__ import annotations

from backend import training
from backend.training.store import TrainStore


def test_feature_extraction_beats_zero_shot_on_emotion_by_15_points(monkeypatch):
    monkeypatch.setattr("backend.training.store._STORE", TrainStore())
    r = training.train("it-emotion", "emotion", methods=["zero_shot", "probe"], learning_curve=True)
    zs, probe = r["methods"]["zero_shot"], r["methods"]["probe"]
    print(f"\nemotion test accuracy: zero-shot {zs['accuracy']:.4f} (macro-F1 {zs['macro_f1']:.4f}), "
          f"probe {probe['accuracy']:.4f} (macro-F1 {probe['macro_f1']:.4f}); curve {r['learning_curve']}")
    assert probe["accuracy"] - zs["accuracy"] >= 0.15
    assert probe["macro_f1"] > zs["macro_f1"]
    curve = r["learning_curve"]
    assert curve["sizes"] == [8, 16, 32, 64, "all"] and curve["examples"][0] == 48
    assert curve["probe"][-1] == probe["accuracy"]  # the 'all' point is the full probe
    assert r["best_method"] == "probe"
    p = training.predict_trained("it-emotion", "I can't stop crying since my dog died.")
    assert p["label"] == "sadness"


def test_a_short_fine_tune_of_minilm_keeps_a_checkpoint(monkeypatch):
    monkeypatch.setattr("backend.training.store._STORE", TrainStore())
    r = training.train("it-ft", "sentiment", methods=["finetune"], epochs=1, max_examples=48,
                       max_seconds=600, batch_size=16, learning_curve=False)
    ft = r["methods"]["finetune"]
    print(f"\nfine-tune sentiment, 48 examples, 1 epoch: {ft['seconds']} s, estimate {ft['estimate']}, "
          f"test accuracy {ft.get('accuracy')}")
    assert ft["steps"] == ft["total_steps"] == 3 and ft["stopped"] == "finished"
    assert ft["estimate"]["steps"] == 3 and ft["estimate"]["seconds_per_step"] > 0
    assert 0 <= ft["accuracy"] <= 1 and ft["epochs"][-1]["step"] == 3
    assert training.predict_trained("it-ft", "Terrible, it broke on day one.")["method"] == "finetune"
