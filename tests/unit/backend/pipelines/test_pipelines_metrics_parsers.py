"""Unit: ROUGE/BLEU on known strings, and the instruct fallback's parsers on recorded replies.

The recorded replies are real SmolLM2-135M-Instruct outputs for our prompts (and some
malformed variants): the parsers must ground what they can and drop what they cannot.
"""

import math

import numpy as np
import pytest

from backend.engines.tasks import instruct as ins
from backend.engines.classify import similarity as sim
from backend.runtime.errors import InputError
from backend.pipelines.metrics import bleu, rouge

LETTER = ("Dear Amazon, two weeks ago I ordered a Megatron action figure from your online store in "
          "Germany. I found an Optimus Prime figure instead! Sincerely, Bumblebee")


# ------------------------------------------------------------------------------ metrics

def test_rouge_known_values():
    r = rouge("the cat sat on the mat", "the cat was on the mat")
    assert r["rouge1"]["f1"] == pytest.approx(5 / 6)  # 5 of 6 unigrams shared
    assert r["rouge2"]["f1"] == pytest.approx(3 / 5)  # the cat, on the, the mat
    assert r["rougeL"]["f1"] == pytest.approx(5 / 6)
    same = rouge("Optimus Prime arrived.", "Optimus Prime arrived.")
    assert all(v["f1"] == pytest.approx(1.0) for v in same.values())
    assert rouge("alpha beta", "gamma delta")["rouge1"]["f1"] == 0.0


def test_bleu_known_values():
    # n-gram precisions 6/7, 5/6, 4/5, 3/4, no brevity penalty -> geometric mean.
    expected = 100 * (6 / 7 * 5 / 6 * 4 / 5 * 3 / 4) ** 0.25
    b = bleu("the cat sat on the mat today", "the cat sat on the mat yesterday")
    assert b["bleu"] == pytest.approx(expected, abs=1e-6)
    assert b["brevity_penalty"] == pytest.approx(1.0)
    assert bleu("Ich habe Megatron bestellt.", "Ich habe Megatron bestellt.")["bleu"] == pytest.approx(100.0)
    assert bleu("völlig anders", "Ich habe Megatron bestellt.")["bleu"] < 5


def test_metrics_need_a_reference():
    with pytest.raises(InputError):
        rouge("x", "  ")
    with pytest.raises(InputError):
        bleu("x", "")


# ---------------------------------------------------------------------- NER parsing

RECORDED_NER = {
    # well-formed, as the demo turn asks
    "good": ("PER: Bumblebee\nORG: Amazon\nLOC: Germany\nMISC: Optimus Prime",
             {("PER", "Bumblebee"), ("ORG", "Amazon"), ("LOC", "Germany"), ("MISC", "Optimus Prime")}),
    # recorded: an unknown type label on the left
    "unknown_type": ("BIGGER: Bumblebee", {("MISC", "Bumblebee")}),
    # recorded: invented types, one entity given as a type synonym
    "invented": ("ORG: Amazon\nBABYBAEMAGAZINE: Megatron Action Figure\nMENCELLUS: Optimus Prime\nPERSONA: Bumblebee",
                 {("ORG", "Amazon"), ("MISC", "Megatron Action Figure"), ("MISC", "Optimus Prime"), ("PER", "Bumblebee")}),
    # recorded: name: sentence (the right side is not a name)
    "sentences": ("Sylvain: My name is Sylvain\nHugging Face: My name is Sylvain\nBrooklyn: My name is Sylvain",
                  {("MISC", "Sylvain"), ("MISC", "Hugging Face"), ("MISC", "Brooklyn")}),
    # other layouts
    "parens_bullets": ("1. Amazon (ORG)\n- **Germany** (LOC)\n* Bumblebee (person)",
                       {("ORG", "Amazon"), ("LOC", "Germany"), ("PER", "Bumblebee")}),
    "reversed_and_lists": ("Amazon - ORGANIZATION\nLOC: Germany, Detroit",
                           {("ORG", "Amazon"), ("LOC", "Germany"), ("LOC", "Detroit")}),
    "prose": ("The text mentions a purchase from an online store.", set()),
    "empty": ("", set()),
}


@pytest.mark.parametrize("name", list(RECORDED_NER))
def test_parse_ner_output(name):
    raw, expected = RECORDED_NER[name]
    assert set(ins.parse_ner_output(raw)) == expected


def test_ground_entities_maps_back_to_characters():
    pairs = [("ORG", "Amazon"), ("MISC", "Optimus Prime"), ("PER", "bumblebee"), ("LOC", "Detroit"),
             ("MISC", "Prime")]
    entities, dropped = ins.ground_entities(LETTER, pairs)
    for e in entities:
        assert LETTER[e["start"]:e["end"]] == e["word"]
    got = {(e["entity_group"], e["word"]) for e in entities}
    # case-insensitive fallback finds "Bumblebee"; "Prime" overlaps the longer "Optimus Prime"
    assert got == {("ORG", "Amazon"), ("MISC", "Optimus Prime"), ("PER", "Bumblebee")}
    assert [d["word"] for d in dropped] == ["Detroit"]
    starts = [e["start"] for e in entities]
    assert starts == sorted(starts)


def test_ground_entities_tags_every_occurrence_on_word_boundaries():
    text = "Prime time: Optimus Prime met Primes."
    entities, _ = ins.ground_entities(text, [("MISC", "Prime")])
    assert [(e["start"], e["end"]) for e in entities] == [(0, 5), (20, 25)]  # not inside "Primes"


def test_parse_free_text_drops_preambles():
    assert ins.parse_free_text("Here is the summary: Bumblebee got the wrong toy.") == "Bumblebee got the wrong toy."
    assert ins.parse_free_text("German translation: Ich habe bestellt.") == "Ich habe bestellt."
    assert ins.parse_free_text("Bumblebee: got the wrong toy.") == "Bumblebee: got the wrong toy."
    assert ins.probability(math.log(0.5)) == pytest.approx(0.5)
    assert ins.probability(float("nan")) is None


# ---------------------------------------------------------------- similarity scoring

def test_scores_from_cosines():
    cos = np.array([[0.5, 0.1, 0.3]])
    single = sim.scores_from_cosines(cos, multi_label=False, temperature=0.1)
    assert single.sum() == pytest.approx(1.0)
    assert list(np.argsort(-single[0])) == [0, 2, 1]
    assert single[0, 0] / single[0, 1] == pytest.approx(math.exp((0.5 - 0.1) / 0.1))
    multi = sim.scores_from_cosines(cos, multi_label=True, temperature=0.1, threshold=0.3)
    assert multi[0, 2] == pytest.approx(0.5)
    # independent: adding a label leaves the others' scores unchanged
    more = sim.scores_from_cosines(np.array([[0.5, 0.1, 0.3, 0.9]]), True, 0.1, 0.3)
    assert np.allclose(more[0, :3], multi[0])


def test_parse_labels_and_descriptions():
    assert sim.parse_labels("complaint, praise,, complaint ,question") == ["complaint", "praise", "question"]
    with pytest.raises(InputError, match="No candidate labels"):
        sim.parse_labels(" , ")
    with pytest.raises(InputError, match="at most"):
        sim.parse_labels([f"label {i}" for i in range(100)])
    assert sim.parse_label_descriptions("POSITIVE: glad\nNEGATIVE\n\n") == {"POSITIVE": "glad", "NEGATIVE": "NEGATIVE"}
    with pytest.raises(InputError):
        sim.parse_label_descriptions(": no label")
