"""The chapter 7 reader (backend.engines.qa.reader) on a tiny random BERT with the real MiniLM tokenizer."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from backend.engines.qa import reader
from backend.engines.qa.data import Example
from backend.pipelines import tasks
from backend.runtime import config
from tests.helpers.tiny_models import minilm_tokenizer, tiny_bert

PORT = ("The city council of Lyon voted to close the old river port, which was built in 1851. "
        "The site will become housing for about 3,000 people. Fishermen protested outside the town hall.")


def _ex(q, a=None, i="x"):
    return Example(i, PORT, q, (a,) if a else (), (PORT.index(a),) if a else ())


@pytest.fixture(scope="module")
def tok():
    return minilm_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return reader.new_model(tiny_bert(tok.vocab_size), seed=0).eval()


def test_new_model_copies_the_encoder_and_adds_a_span_head(tok):
    enc = tiny_bert(tok.vocab_size)
    qa = reader.new_model(enc, seed=0)
    assert type(qa).__name__ == "BertForQuestionAnswering"
    body = qa.base_model.state_dict()
    for k, v in enc.state_dict().items():
        if k in body:
            assert (body[k] == v).all(), k
    assert qa.qa_outputs.out_features == 2
    qa.base_model.embeddings.word_embeddings.weight.data.zero_()  # a copy: the encoder is untouched
    assert enc.embeddings.word_embeddings.weight.abs().sum() > 0


def test_training_labels_point_at_the_answer_or_cls(tok):
    rows = reader.features(tok, [_ex("When was the port built?", "1851"), _ex("Who is the mayor?")], 384, 128)
    assert len(rows) == 2
    ans = rows[0]
    span = tok.decode(ans["input_ids"][ans["start_positions"]:ans["end_positions"] + 1])
    assert span == "1851"
    assert (rows[1]["start_positions"], rows[1]["end_positions"]) == (0, 0)


def test_a_window_without_the_answer_is_labelled_cls(tok):
    rows = reader.features(tok, [_ex("Who protested?", "Fishermen")], 24, 4)
    assert len(rows) > 2  # the context is cut into windows
    labelled = [r for r in rows if r["start_positions"] > 0]
    assert labelled and any(r["start_positions"] == 0 for r in rows)
    for r in labelled:
        assert tok.decode(r["input_ids"][r["start_positions"]:r["end_positions"] + 1]) == "fishermen"


def test_answers_are_exact_slices_and_cls_is_its_own_prediction(model, tok):
    out = reader.answer(model, tok, "When was the port built?", PORT, top_n=5, threshold=-1e9)
    assert not out["no_answer"] and len(out["answers"]) == 5
    for a in out["answers"]:
        assert PORT[a["start"]:a["end"]] == a["answer"]
        assert len(tok(a["answer"], add_special_tokens=False)["input_ids"]) <= reader.MAX_ANSWER_TOKENS
    total = sum(a["score"] for a in out["answers"]) + out["null_score"]
    assert total <= 1 + 1e-6
    assert out["margin"] == pytest.approx(out["best_logit"] - out["null_logit"], abs=1e-3)
    refused = reader.answer(model, tok, "When was the port built?", PORT, threshold=1e9)
    assert refused["no_answer"] and refused["answers"]  # the rejected spans are still listed


def test_long_contexts_are_read_in_stride_windows(model, tok):
    long = " ".join([PORT] * 12)
    out = reader.answer(model, tok, "When was the port built?", long, max_length=64, stride=16, threshold=-1e9)
    assert out["windows"] > 3 and out["stride"] <= 16
    assert {a["window"] for a in reader.answer(model, tok, "Who?", long, top_n=20, max_length=64, stride=16,
                                                     threshold=-1e9)["answers"]} != {0}
    for a in out["answers"]:
        assert long[a["start"]:a["end"]] == a["answer"]


def test_threshold_comes_from_the_model_config(model, tok):
    model.config.null_threshold = 1e9
    try:
        assert reader.answer(model, tok, "When was the port built?", PORT)["no_answer"]
    finally:
        del model.config.null_threshold


def test_best_threshold_maximises_f1():
    # margins of 4 questions: two answerable (span F1 1.0 and 0.0), two unanswerable
    t = reader.best_threshold([5.0, 1.0, 0.5, -2.0], [True, True, False, False], [1.0, 0.0, 0.0, 0.0])
    assert 0.5 <= t < 5.0  # answer the first (and, tied, the second): total 3 of 4; the third is refused
    assert reader.best_threshold([2.0, 3.0], [False, False], [0.0, 0.0]) >= 3.0  # refuse everything
    assert reader.best_threshold([2.0, 3.0], [True, True], [1.0, 1.0]) < 2.0  # answer everything
    assert reader.best_threshold([-math.inf], [False], [0.0]) == -1.0  # no finite margin: the default side


def test_training_lowers_the_loss_and_learns_a_memorised_answer(tok):
    model = reader.new_model(tiny_bert(tok.vocab_size, seed=1), seed=1)
    data = [_ex("When was the port built?", "1851", "a"), _ex("How many people will live there?", "about 3,000", "b"),
            _ex("Who is the mayor of Lyon?", None, "c"), _ex("Who protested?", "Fishermen", "d")]
    seen = []
    info = reader.train(model, tok, data, reader.Recipe(epochs=40, batch_size=4, learning_rate=3e-3, warmup=0.05,
                                                        freeze_word_embeddings=False),
                        lambda s, t, loss: seen.append(loss))
    assert info["steps"] == info["total_steps"] == 40
    assert seen[-1] < seen[0] / 2
    out = reader.answer(model, tok, "When was the port built?", PORT, threshold=-1e9)
    assert out["answers"][0]["answer"] == "1851"


def test_the_pipelines_runner_serves_the_reader(model, tok):
    lm = SimpleNamespace(model=model, tokenizer=tok, method=config.METHOD_FINETUNED, checkpoint="tiny-reader")
    r = tasks.qa(lm, "When was the port built?", PORT, top_n=2)
    assert r["method"] == config.METHOD_FINETUNED and isinstance(r["no_answer"], bool)
    assert r["scoring"].startswith("start logit + end logit") and r["no_answer_reply"] == "[CLS] (no answer)"
    assert all(PORT[a["start"]:a["end"]] == a["answer"] for a in r["answers"])
    if r["no_answer"]:
        assert r["answer"] == "" and "No answer in this text" in " ".join(r["notices"])
    else:
        assert r["answer"] == r["answers"][0]["answer"]


def test_several_passages_read_together_give_what_each_gives_alone(model, tok):
    long = " ".join([PORT] * 6)  # a passage of several windows among short ones: padding and window owners
    texts = ["The bridge opened in 1932 after four years of work.", long, PORT]
    together = reader.answer_many(model, tok, "When was the port built?", texts, top_n=3, max_length=64, stride=16)
    for text, got in zip(texts, together):
        alone = reader.answer(model, tok, "When was the port built?", text, top_n=3, max_length=64, stride=16)
        assert [a["answer"] for a in got["answers"]] == [a["answer"] for a in alone["answers"]]
        assert got["margin"] == pytest.approx(alone["margin"], abs=1e-3) and got["windows"] == alone["windows"]
    top, rows = reader.read_passages(model, tok, "When was the port built?", texts, rank_penalty=0.0, depth=2)
    assert len(rows) == 2 and (top is None or top["passage"] in (1, 2))
