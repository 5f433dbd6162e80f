"""Every goal (backend/challenges) checked with the real models of the local profile: a known-good answer
passes and a known-bad one fails, each with a reason and the model's evidence (a check that cannot fail is
a defect). Answers are short and counts small: the whole file runs in seconds once the models are loaded."""

from __future__ import annotations

import json

import pytest

from backend import challenges

H = "The quick brown fox jumps over the lazy dog near the river bank."
# id -> (a known-good answer, a known-bad answer, an evidence key both verdicts carry)
ANSWERS = {
    "mixed-review": ({"text": "Nice design but it broke after a week."},
                     {"text": "I love this phone, it is wonderful and amazing."}, "score"),
    "three-entity-types": ({"text": "Tim Cook of Apple visited Paris."}, {"text": "The cat sat on the mat."}, "entities"),
    "flip-sentiment": ({"a": "The film was great.", "b": "The film was awful."},
                       {"a": "The service was slow.", "b": "The service was late."}, "a"),
    "tokenizers-disagree": ({"text": "    def   FooBar(x):  return  x  **  2   # \U0001f917\U0001f917"},
                            {"text": "Tokenizing text is a core task of NLP."}, "difference"),
    "unknown-to-wordpiece": ({"text": "I love \U0001f917 and \u2603 so much"}, {"text": "hello world"}, "unknown_at"),
    "previous-token-head": ({"text": H, "layer": 0, "head": 2}, {"text": H, "layer": 0, "head": 0}, "share_to_previous"),
    "special-sink": ({"text": H, "layer": 4, "head": 5}, {"text": H, "layer": 0, "head": 2}, "share_to_special"),
    "order-matters": ({"a": "I was sad, not happy.", "b": "I was happy, not sad."},
                      {"a": "The plot was good, the acting bad.", "b": "The acting was good, the plot bad."}, "b"),
    "cross-lingual-twins": ({"english": "The weather is very nice today.", "german": "Das Wetter ist heute sehr schön."},
                            {"english": "The weather is very nice today.", "german": "Ich habe meinen Schlüssel verloren."},
                            "multilingual_cosine"),
    "compound-pieces": ({"word": "Bundesregierung"}, {"word": "Haus"}, "wordpiece"),
    "german-tagged-right": ({"text": "Angela Merkel besuchte Siemens in München.", "person": "Angela Merkel",
                             "place": "München"},
                            {"text": "Die Bundeskanzlerin traf den Präsidenten von Frankreich.",
                             "person": "Bundeskanzlerin", "place": "Frankreich"}, "entities"),
    "stop-the-loop": ({"prompt": "One, two, three, one, two, three, one,", "max_new_tokens": 9},
                      {"prompt": "Once upon a time", "max_new_tokens": 4}, "greedy_text"),
    "beam-beats-greedy": ({"prompt": "Here is a list of fruits:", "max_new_tokens": 6},
                          {"prompt": "The weather today is", "max_new_tokens": 6}, "gain"),
    "sure-next-token": ({"prompt": "To be or not to"}, {"prompt": "My favourite colour is"}, "candidates"),
    "rouge-fooled": ({"summary": "The customer was furious about the slow delivery and the rude staff."},
                     {"summary": "The customer was happy with the quick delivery and the friendly staff."}, "rouge1_f"),
    "paraphrase-low-rouge": ({"summary": "A client was thrilled by fast shipping and kind employees."},
                             {"summary": "The weather in Paris is rainy."}, "cosine"),
    "search-first": ({"query": "How does a student model learn from a teacher model?"},
                     {"query": "How do I make a model smaller?"}, "target_rank"),
    "reader-refuses": ({"question": "Who painted the harbour?"}, {"question": "When was the harbour built?"}, "reader"),
    "int8-within-one-point": (
        {"positive": ["I love this movie.", "What a great day.", "The food was excellent.", "Wonderful service, thank you!"],
         "negative": ["This is terrible.", "I hate waiting in line.", "The product broke after a day.", "Awful support."]},
        {"positive": ["This is terrible.", "I hate waiting in line.", "The product broke after a day.", "Awful support."],
         "negative": ["I love this movie.", "What a great day.", "The food was excellent.", "Wonderful service, thank you!"]},
        "int8_accuracy"),
    "int8-same-text": ({"prompt": "1, 2, 3, 4, 5,", "max_new_tokens": 6}, {"prompt": "Once upon a time", "max_new_tokens": 4},
                       "same_tokens"),
    "zero-shot-winner": ({"text": "Simmer the garlic and onions in butter, then add the tomatoes."},
                         {"text": "The match ended in a draw."}, "ranking"),
    "few-labels": ({"joy": ["What a wonderful surprise, I am thrilled!", "I feel so happy and grateful today."],
                    "anger": ["This is outrageous, I am so angry!", "I hate how they treated me, it makes me furious."]},
                   {"joy": ["Hello.", "Good morning."], "anger": ["Hello.", "Good evening."]}, "held_out"),
    "first-merge": ({"corpus": "xylophone xy xyz oxygen xy"}, {"corpus": "the cat sat on the mat"}, "first_merge"),
    "one-token-word": ({"corpus": " ".join(["transformer"] * 20)}, {"corpus": "transformers are models"}, "pieces"),
    "unseen-word": ({"corpus": "low low low lower lower newest newest newest widest widest"},
                    {"corpus": "the cat sat on the mat"}, "pieces"),
    "window-enough": ({"text": H, "layer": 0, "head": 2, "window": 1}, {"text": H, "layer": 4, "head": 5, "window": 1},
                      "kept_by_window"),
    "long-range-head": ({"text": H, "layer": 4, "head": 5}, {"text": H, "layer": 0, "head": 2}, "kept_by_window_3"),
}


def test_every_goal_has_a_good_and_a_bad_answer_here():
    assert sorted(ANSWERS) == sorted(c.id for c in challenges.CHALLENGES)


@pytest.mark.parametrize("cid", sorted(ANSWERS))
def test_a_good_answer_passes_and_a_bad_one_fails(cid):
    good, bad, key = ANSWERS[cid]
    yes = challenges.check_challenge(cid, json.dumps(good))
    no = challenges.check_challenge(cid, json.dumps(bad))
    assert yes["passed"] is True, (cid, yes["reason"], yes["evidence"])
    assert no["passed"] is False, (cid, no["reason"], no["evidence"])
    for verdict in (yes, no):
        assert key in verdict["evidence"], (cid, verdict)
        assert len(verdict["reason"]) > 20 and verdict["hint"]
        json.dumps(verdict)  # what /check_challenge returns is JSON


def test_the_same_answer_gets_the_same_verdict():
    """Deterministic: greedy decoding and forwards in eval mode give the same evidence twice."""
    answer = json.dumps(ANSWERS["stop-the-loop"][0])
    first, second = (challenges.check_challenge("stop-the-loop", answer) for _ in range(2))
    assert first["evidence"] == second["evidence"]
    assert first["evidence"]["repeated_3gram"] and first["evidence"]["completed_by_new_token"] >= 0


def test_flip_sentiment_evidence_is_the_two_labels_and_scores():
    v = challenges.check_challenge("flip-sentiment", json.dumps(ANSWERS["flip-sentiment"][0]))
    assert v["evidence"]["a"]["label"] != v["evidence"]["b"]["label"]
    assert 0.5 <= v["evidence"]["a"]["score"] <= 1 and 0.5 <= v["evidence"]["b"]["score"] <= 1
    assert v["evidence"]["changed"] == {"from": "great.", "to": "awful."}
    two = challenges.check_challenge("flip-sentiment", '{"a": "The film was great.", "b": "A film was awful."}')
    assert not two["passed"] and "differ in 2 words" in two["reason"]
    added = challenges.check_challenge("flip-sentiment", '{"a": "The film was good.", "b": "The film was not good."}')
    assert added["evidence"]["changed"] == {"from": "", "to": "not"} and "Adding 'not'" in added["reason"]
