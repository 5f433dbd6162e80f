"""The Interventions tab's formatting: the spec helper, the choices after a run, the sentences
that say what the numbers mean, and the figures (plain data in; no model)."""

from __future__ import annotations

import pytest

from backend.interventions import spec
from components.interventions import ui as tab
from components.interventions import plots


@pytest.mark.parametrize("current,layer,what,action,expected", [
    ("", 2, "head 3", "remove (=0)", "L2H3=0"),
    ("L2H3=0", 5, "head 1", "halve (*0.5)", "L2H3=0, L5H1*0.5"),
    ("L2H3=0, ", 1, "every head", "remove (=0)", "L2H3=0, L1H*=0"),
    (None, 0, "the MLP sub-layer", "double (*2)", "L0.mlp*2"),
    ("x", 4, "the attention sub-layer", "remove (=0)", "x, L4.attn=0"),
])
def test_the_helper_writes_what_the_parser_reads(current, layer, what, action, expected):
    out = tab.add_item(current, layer, what, action)
    assert out == expected
    if not out.startswith("x"):
        assert spec.canonical(spec.parse(out)) == expected


def test_choices_follow_the_model_that_ran():
    layers, heads = tab.shape_updates({"num_layers": 6, "num_heads": 12}, 20, "head 11")
    assert layers["choices"] == list(range(6)) and heads["choices"][11] == "head 11" and len(heads["choices"]) == 15
    assert layers["value"] == 0 and heads["value"] == "head 11"
    _, heads = tab.shape_updates({"num_layers": 30, "num_heads": 9}, 3, "head 11")
    assert heads["value"] == "head 0"
    assert tab.shape_updates(None) == tab.shape_updates({"error": 1})


def _decoder_result(max_diff=0.0, flips=1):
    return {
        "role": "decoder", "spec": "L0.mlp=0", "num_layers": 30, "num_heads": 9, "tokens": ["The", " cat"],
        "model": {"checkpoint": "HuggingFaceTB/SmolLM2-135M-Instruct"}, "kl_mean": 0.5, "num_flips": flips,
        "next_token": {"after_token": " cat", "kl": 1.25, "top1_before": " sat", "top1_after": " is", "top": []},
        "check": {"compared": "logits at every position", "max_abs_diff": max_diff, "tolerance": 1e-5,
                  "within_tolerance": max_diff <= 1e-5},
    }


def test_the_decoder_summary_says_which_model_and_spec_and_what_kl_means():
    text = tab._decoder_md(_decoder_result())
    assert "SmolLM2-135M-Instruct" in text and "`L0.mlp=0`" in text and "30 layers × 9 heads" in text
    assert "KL(before ‖ after) = 1.2500 nats" in text and "**changes**" in text and "1 of 2" in text
    assert "KL is 0 when the next-token distribution is unchanged" in text
    assert "✅" in text and "exactly equal" in text
    bad = tab._decoder_md(_decoder_result(max_diff=3e-3))
    assert "❌" in bad and "3.0e-03" in bad


def test_the_encoder_summary_names_the_cosine_and_the_classifier():
    r = {"role": "encoder", "spec": "", "num_layers": 6, "num_heads": 12, "model": {"checkpoint": "m"},
         "embedding": {"cosine": 0.93, "one_minus_cosine": 0.07, "dims": 384},
         "sentiment": {"before": {"label": "POSITIVE", "score": 0.99}, "after": {"label": "NEGATIVE", "score": 0.6},
                       "changed": True},
         "check": {"compared": "last hidden state", "max_abs_diff": 0.0, "tolerance": 1e-5, "within_tolerance": True}}
    text = tab._encoder_md(r)
    assert "= 0.930000" in text and "(empty: nothing changed)" in text and "**changes its label**" in text
    assert "POSITIVE 99.0%" in text and "NEGATIVE 60.0%" in text
    r["sentiment"] = {"skipped": "not built"}
    assert "not run (not built)" in tab._encoder_md(r)


def test_figures_carry_the_numbers():
    top = [{"token": " Paris", "p_before": 0.77, "p_after": 0.58}, {"token": " the", "p_before": 0.06, "p_after": 0.07}]
    fig = plots.next_token(top, "t")
    by_name = {t.name: list(t.x) for t in fig.data}
    assert by_name == {"as it is": [0.06, 0.77], "with the spec": [0.07, 0.58]}
    flips = [{"position": 0, "token": "a", "next_before": "b", "next_after": "c", "flipped": True, "kl": 0.5}]
    assert list(plots.flips(flips, "t").data[0].y) == [0.5]
    sweep = {"metric": "kl_last", "heads": [{"head": 4, "score": 0.2, "top1_changed": True},
                                            {"head": 1, "score": 0.1, "top1_changed": False}]}
    bars = plots.sweep(sweep, "t").data[0]
    assert list(bars.x) == ["head 4", "head 1"] and list(bars.y) == [0.2, 0.1]
    assert list(plots.token_cosine(["a", "b"], [1.0, 0.75], "t").data[0].y) == [0.0, 0.25]
