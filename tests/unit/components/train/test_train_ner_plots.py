"""The NER task's figures say what they show (split, steps, model) and escape what a learner
uploaded; the tagged sentence highlights exactly the entity's characters."""

from __future__ import annotations

from components.train.ner_plots import (confusion_figure, entities_html, errors_html, loss_figure, score_rows,
                                        scores_figure)


def _result():
    per = {"PER": {"precision": 0.5, "recall": 1.0, "f1": 0.6667, "support": 1, "predicted": 2, "correct": 1}}
    return {
        "steps": 7, "total_steps": 7, "epochs": 1, "best_step": 7, "train_sentences": 30,
        "model": {"checkpoint": "tiny-bert"}, "losses": [2.0, 1.5, 1.2, 1.0, 0.9, 0.8, 0.7],
        "evals": [{"step": 7, "f1": 0.4}],
        "test": {"split": "test", "per_type": per, "overall": {**per["PER"]}},
        "predictions": {"test": [{"tokens": ["Bob"], "gold": ["B-PER"], "pred": ["B-PER"]}] * 3},
        "confusion": {"split": "test", "labels": ["O", "B-PER"], "counts": [[3, 1], [0, 2]],
                      "normalised": [[0.75, 0.25], [0.0, 1.0]], "words": 6},
        "errors": {"split": "validation", "of": 12, "rows": [
            {"index": 4, "loss": 1.25, "tokens": ["<script>", "Bob"], "gold": ["O", "B-PER"], "pred": ["B-PER", "B-PER"],
             "differs": [True, False], "wrong_words": 1}]},
    }


def test_table_and_figures_name_split_steps_and_model():
    r = _result()
    rows = score_rows(r)
    assert rows[0] == ["PER", "0.500", "1.000", "0.667", 1, 2] and rows[-1][0] == "overall (micro)"
    bars = scores_figure(r)
    assert "test split, 3 sentences" in bars.layout.title.text and "7 steps" in bars.layout.title.text
    assert "tiny-bert" in bars.layout.title.text and [t.name for t in bars.data] == ["precision", "recall", "f1"]
    heat = confusion_figure(r)
    assert "test split, 6 words" in heat.layout.title.text
    assert list(heat.data[0].text[0]) == ["3", "1"] and list(heat.data[0].z[0]) == [0.75, 0.25]  # counts shown, colour = share
    loss = loss_figure(r)
    assert "7 steps (1 epoch), best at step 7" in loss.layout.title.text and len(loss.data) == 2


def test_error_analysis_escapes_uploaded_words_and_frames_the_differences():
    out = errors_html(_result())
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "The 1 validation sentences (of 12)" in out and "(7 steps)" in out
    assert out.count("2px solid #d62728") == 2 + 1  # the differing word's two tags, plus the legend


def test_tagged_sentence_highlights_the_entity_characters():
    p = {"text": "I met <Bob> in Paris.", "entities": [
        {"entity_group": "PER", "word": "Bob", "score": 0.91, "start": 7, "end": 10},
        {"entity_group": "LOC", "word": "Paris", "score": 0.8, "start": 15, "end": 20}],
        "model": {"steps": 7, "base_checkpoint": "tiny", "trained_on": "x", "test_f1": 0.5, "test_n": 3}}
    out = entities_html(p)
    assert "I met &lt;<mark" in out and "Bob <small><b>PER</b> 0.91" in out and "</mark>&gt; in <mark" in out
    assert "test F1 0.500 on 3 sentences" in out and "No entity found" not in out
