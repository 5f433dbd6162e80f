"""What the Why tab may conclude (backend.why.claims) and how the page shows it: each claim is
withheld under its stated condition (a failed or unjudgeable completeness check, a change too small to
explain, one token deciding the deletion test, a tie), colours are measured against the change explained
(not a row's own largest score), signless methods are never red or blue, and the explained NER token is
shown or its absence explained."""

from __future__ import annotations

import re

import pytest

from backend.why import claims
from components.why import handlers, plots

TOKENS = [{"token": w, "index": i} for i, w in enumerate(["Angela", "Merkel", "visited", "London"])]


def _comp(rel, diff=0.5, steps=16, first=None):
    c = {"difference": diff, "relative_gap": rel, "steps": steps, "gap": abs(diff) * (rel or 0),
         "sum_of_attributions": diff * (1 + (rel or 0))}
    if first:
        c["first_try"] = first
    return c


def test_completeness_passes_fails_or_is_not_judged():
    assert claims.completeness(_comp(0.01), 256)["status"] == "passed"
    failed = claims.completeness(_comp(3.14, steps=16), 256)
    assert failed["status"] == "failed" and "314%" in failed["text"] and "not claimed" in failed["text"]
    assert "More steps (up to 256)" in failed["suggestion"]
    at_max = claims.completeness(_comp(1.35, steps=256, first={"steps": 16, "relative_gap": 3.14}), 256)
    assert at_max["status"] == "failed" and at_max["suggestion"].startswith("Even the maximum, 256 steps")
    assert "from 314% at 16 steps to 135% at 256" in at_max["suggestion"]
    assert "logit difference" in claims.completeness(_comp(1.35), 256, suggest_contrast=True)["suggestion"]
    # NER's "gap 0.0000 = 0.03%" of a change of 1e-4 is no pass: the change is too small to judge
    small = claims.completeness(_comp(0.0003, diff=1e-4), 256)
    assert small["status"] == "too_small" and "below 0.001" in small["text"]


def _deletion(curves: dict, random_mean, ranking, area):
    return {"curves": curves, "random_mean": random_mean, "ranking": ranking, "area_over_random": area}


SCORES = {"integrated_gradients": [0.1, 0.5, 0.2], "occlusion": [0.4, 0.1, 0.3],
          "gradient_x_input": [0.2, 0.1, 0.05], "attention_rollout": [0.2, 0.3, 0.5]}
EXPL = ["gradient_x_input", "integrated_gradients", "occlusion", "attention_rollout"]


def test_integrated_gradients_are_not_named_when_their_completeness_check_failed():
    dl = _deletion({m: [0.9, 0.7, 0.4, 0.1] for m in SCORES}, [0.9, 0.8, 0.6, 0.1],
                   ["integrated_gradients", "occlusion", "gradient_x_input", "attention_rollout"],
                   {"integrated_gradients": 0.3, "occlusion": 0.2, "gradient_x_input": 0.1, "attention_rollout": 0.05})
    claim = claims.faithfulness(dl, SCORES, TOKENS, EXPL, "failed")
    assert claim["method"] == "occlusion" and claim["status"] == "claimed"
    assert claim["withheld"] == {"integrated_gradients": "its completeness check failed"}
    assert "Integrated gradients is not named: its completeness check failed" in claim["text"]
    assert claims.faithfulness(dl, SCORES, TOKENS, EXPL, "passed")["method"] == "integrated_gradients"
    assert claims.faithfulness(dl, SCORES, TOKENS, EXPL, "too_small")["method"] == "occlusion"


def test_no_method_is_named_for_a_change_too_small_to_explain():
    dl = _deletion({m: [0.99990, 0.99985, 0.99989, 0.99992] for m in SCORES}, [0.9999, 0.99991, 0.99989, 0.99992],
                   EXPL, dict.fromkeys(EXPL, 1e-5))
    claim = claims.faithfulness(dl, SCORES, TOKENS, EXPL, "too_small")
    assert claim["method"] is None and claim["status"] == "too_small" and "too small" in claim["text"]


def test_one_token_that_flips_the_output_decides_nothing_about_faithfulness():
    # rollout's top token ("visited", index 2) removed alone flips the tag: 0.99 -> 0.02
    dl = _deletion({"attention_rollout": [0.99, 0.02, 0.02, 0.02], "occlusion": [0.99, 0.97, 0.02, 0.02]},
                   [0.99, 0.9, 0.5, 0.02], ["attention_rollout", "occlusion"],
                   {"attention_rollout": 0.4, "occlusion": 0.2})
    claim = claims.faithfulness(dl, SCORES, TOKENS, ["occlusion", "attention_rollout"], None)
    assert claim["method"] is None and claim["status"] == "one_token"
    assert "Removing 'visited' alone moves the output by 0.9700, 100%" in claim["text"]
    assert claim["tied"] == ["attention_rollout"]  # occlusion put "Angela" first


def test_when_any_one_removal_moves_the_output_the_test_ranks_nothing():
    # a short decoder prompt: removing any token (random orders too) drops p(next token) from 0.77 to ~0
    dl = _deletion({"occlusion": [0.77, 0.0, 0.0, 0.0], "gradient_x_input": [0.77, 0.02, 0.0, 0.0]},
                   [0.77, 0.01, 0.0, 0.0], ["occlusion", "gradient_x_input"],
                   {"occlusion": 0.004, "gradient_x_input": 0.002})
    claim = claims.faithfulness(dl, SCORES, TOKENS, ["occlusion", "gradient_x_input"], None)
    assert claim["method"] is None and claim["status"] == "any_token" and "random orders too" in claim["text"]


def test_a_tie_names_no_single_method():
    dl = _deletion({"occlusion": [0.9, 0.8, 0.5, 0.1], "gradient_x_input": [0.9, 0.8, 0.5, 0.1]},
                   [0.9, 0.85, 0.7, 0.1], ["occlusion", "gradient_x_input"],
                   {"occlusion": 0.2, "gradient_x_input": 0.195})
    claim = claims.faithfulness(dl, SCORES, TOKENS, ["occlusion", "gradient_x_input"], None)
    assert claim["method"] is None and claim["tied"] == ["occlusion", "gradient_x_input"]


def test_notes_name_an_attention_sink_and_saturation():
    scores = {"attention_rollout": [0.8, 0.1, 0.05, 0.05]}
    sink = claims.notes(scores, TOKENS, [0, 1, 2, 3], 0.3, "probability of the next token", None)
    assert sink[0]["kind"] == "attention_sink" and "80% of its weight on the first token, 'Angela'" in sink[0]["text"]
    assert claims.notes(scores, TOKENS, [1, 2, 3, 4], 0.3, "p", None) == []  # a [CLS] before it: not the first token
    agreement = {"methods": ["gradient_x_input", "integrated_gradients"], "spearman": [[1, -0.4], [-0.4, 1]]}
    sat = claims.notes({}, TOKENS, [0], 0.9999, "probability that 'London' is B-LOC", agreement)
    assert sat[0]["kind"] == "saturation" and "Spearman -0.40" in sat[0]["text"] and "saturated" in sat[0]["text"]
    agreement["spearman"] = [[1, 0.9], [0.9, 1]]
    assert claims.notes({}, TOKENS, [0], 0.9999, "p", agreement) == []


def test_the_colour_reference_is_the_change_explained_held_to_the_floor():
    assert claims.scale(0.9, 0.4, ["occlusion"])["reference"] == pytest.approx(0.5)
    tiny = claims.scale(0.9999, 0.9998, ["occlusion", "attention_rollout"])
    assert tiny["reference"] == claims.FLOOR and tiny["below_floor"] and tiny["signless"] == ["attention_rollout"]
    assert "no sign" in tiny["text"]


def _ner_result() -> dict:
    scores = {"integrated_gradients": [1e-4, -1e-4, 2e-5], "attention_rollout": [0.5, 0.3, 0.2]}
    return {"methods": list(scores), "scores": scores,
            "method_words": {"integrated_gradients": "integrated gradients", "attention_rollout": "attention rollout"},
            "tokens": TOKENS[:3], "quantity": "probability that 'London' is B-LOC", "value": 0.9999,
            "prediction": {"label": "B-LOC", "focus": {"index": 3, "token": "London", "scored": False,
                                                      "why_not_scored": "'London' is the token whose tag is explained"}},
            "checks": {"scale": claims.scale(0.9999, 0.9998, list(scores)), "meanings": {}}}


def test_tiny_scores_are_pale_against_the_stated_reference_and_rollout_is_never_red_or_blue():
    strip = plots.heat_strip(_ner_result())
    alphas = [float(a) for a in re.findall(r"rgba\((?:214,39,40|31,119,180),([0-9.]+)\)", strip)]
    assert alphas and max(alphas) <= 0.16  # 1e-4 against 1e-3: a tenth of full colour (0.80 when each row was its own max)
    rollout_row = strip.split("why-method'>attention rollout")[1]
    assert "214,39,40" not in rollout_row and "31,119,180" not in rollout_row and "44,160,44" in rollout_row
    assert "below the 0.001 floor" in strip and "no sign" in strip
    assert strip.count("why-focus") == 2 and strip.index("visited") < strip.index("why-focus")  # London, in place
    headers, _ = plots.table_rows(_ner_result())
    assert headers[-1] == "rollout (no sign)"


def test_the_summary_withholds_the_claim_and_says_why():
    r = _ner_result()
    dl = _deletion({"integrated_gradients": [0.9, 0.4, 0.2, 0.1]}, [0.9, 0.8, 0.5, 0.1], ["integrated_gradients"],
                   {"integrated_gradients": 0.2})
    comp = {**_comp(1.35, steps=128), "verdict": claims.completeness(_comp(1.35, steps=128), 256)}
    r["checks"].update({"completeness": comp, "deletion": dl, "meanings": {"completeness": "", "deletion": "",
                                                                           "agreement": ""},
                        "faithfulness": claims.faithfulness(dl, {"integrated_gradients": [1, 0, 0]}, TOKENS,
                                                            ["integrated_gradients"], "failed"),
                        "notes": [{"kind": "attention_sink", "text": "sink"}]})
    r["checks"]["most_faithful"] = r["checks"]["faithfulness"]["method"]
    r.update(timing={"one_forward": 0.01, "checks": 0.1, "integrated_gradients": 0.1, "attention_rollout": 0.1},
             seconds=1.0)
    md = handlers.summary_md(r)
    assert "Most faithful here: not claimed." in md and "completeness check failed" in md
    assert "135% of the change explained" in md and "More steps \\(up to 256\\)" in md
    assert "Not in the scores:" in md and "Why rollout sits on the first token" in md
    assert "under 5%" not in md and "Most faithful here:** integrated" not in md


@pytest.mark.parametrize("text, term", [
    ("integrated gradients", "integrated gradients"), ("occlusion", "occlusion"),
    ("attention rollout", "attention rollout"), ("rollout", "attention rollout"), ("baseline", "baseline"),
    ("completeness", "completeness"), ("Spearman", "Spearman"),
    ("an attention sink", "attention sink"), ("saturation", "saturation"), ("gradient x input", "gradient x input"),
])
def test_the_why_tabs_terms_are_in_the_glossary_as_the_code_computes_them(text, term):
    from components.shell.glossary import GLOSSARY, find_terms

    assert [t for t, _, _ in find_terms(text)] == [term]
    assert f"over {100 * claims.TOLERANCE:.0f}%" in GLOSSARY["completeness"]
    assert f"under {claims.FLOOR:g}" in GLOSSARY["completeness"]
    assert "[PAD]" in GLOSSARY["baseline"]
