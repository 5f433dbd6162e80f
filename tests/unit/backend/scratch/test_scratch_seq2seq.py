"""The From scratch tab's tiny encoder-decoder: the shipped toy dates, the word-level tokenizer,
a BART built from a tiny config and trained a few steps, the cross-attention recomputed from the
weights, the session rules (plan, stop, no model yet), the download and the bertviz views."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
import torch

from backend import scratch
from backend.engines.scratch import seq2seq, seq2seq_data
from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.scratch import seq2seq_store

TINY = dict(layers=1, heads=2, width=32, batch=32, eval_every=10)


@pytest.fixture(autouse=True)
def fresh_store():
    seq2seq_store.STORE.set(None)
    yield
    seq2seq_store.STORE.set(None)


@pytest.fixture(scope="module")
def tok():
    return seq2seq.build_tokenizer(seq2seq_data.load("train"))


# ---- data ------------------------------------------------------------------------------------

def test_the_shipped_files_are_what_the_generator_makes_and_the_splits_are_disjoint():
    made = seq2seq_data.generate()
    for split in seq2seq_data.SPLITS:
        shipped = seq2seq_data.load(split)
        assert len(shipped) == seq2seq_data.SIZES[split]
        assert shipped == tuple((r["source"], r["target"]) for r in made[split])
    dates = {k: {t for _, t in seq2seq_data.load(k)} for k in seq2seq_data.SPLITS}
    sources = {k: {s for s, _ in seq2seq_data.load(k)} for k in seq2seq_data.SPLITS}
    for a, b in (("train", "test"), ("train", "validation"), ("validation", "test")):
        assert not dates[a] & dates[b] and not sources[a] & sources[b], (a, b)
    assert len(dates["train"]) == seq2seq_data.SIZES["train"]  # one wording per date: no duplicates


@pytest.mark.parametrize("year,words", [(1905, "nineteen oh five"), (1900, "nineteen hundred"),
                                        (1984, "nineteen eighty-four"), (2000, "two thousand")])
def test_years_are_said_as_people_say_them(year, words):
    import random

    assert seq2seq_data.year_words(year, random.Random(0)) == words
    assert seq2seq_data.ordinal(23) == "twenty-third" and seq2seq_data.ordinal(30) == "thirtieth"


# ---- tokenizer -------------------------------------------------------------------------------

def test_the_tokenizer_splits_words_and_digits_and_round_trips_the_target(tok):
    enc = tok.encode("The Twenty-Third of March , two thousand and four")
    assert enc.tokens == ["the", "twenty", "-", "third", "of", "march", ",", "two", "thousand", "and", "four", "</s>"]
    target = tok.encode("2004-03-23")
    assert target.tokens == ["2", "0", "0", "4", "-", "0", "3", "-", "2", "3", "</s>"]
    assert tok.decode(target.ids, skip_special_tokens=True) == "2004-03-23"
    assert tok.encode("5th").tokens == ["5", "<unk>", "</s>"]  # a word never seen in training
    assert [tok.id_to_token(i) for i in range(4)] == list(seq2seq.SPECIALS)


def test_the_tokenizer_saves_and_loads_as_a_transformers_tokenizer(tok, tmp_path):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                            unk_token="<unk>").save_pretrained(tmp_path)
    back = AutoTokenizer.from_pretrained(tmp_path)
    ids = back("1999-12-31").input_ids
    assert ids == tok.encode("1999-12-31").ids and back.decode(ids, skip_special_tokens=True) == "1999-12-31"


# ---- model -----------------------------------------------------------------------------------

def _tiny_model(tok, layers=2, heads=2, width=32, seed=0):
    return seq2seq.build_model(tok.get_vocab_size(), layers, heads, width, 2 * width, seed, tok).eval()


def test_the_plan_counts_the_parameters_the_model_has(tok):
    for layers, width in ((1, 32), (2, 64), (3, 96)):
        model = _tiny_model(tok, layers, 4, width)
        assert scratch.plan_seq2seq(10, layers, 4, width)["parameters"] == seq2seq.param_count(model)


def test_the_model_returns_all_three_kinds_of_attention_and_the_recompute_equals_them(tok):
    model = _tiny_model(tok, layers=2, heads=2)  # random weights: the check holds whatever was learned
    text = "the twenty-third of march , two thousand and four"
    for layer in range(2):
        for head in range(2):
            r = seq2seq.inspect(model, tok, text, layer, head)
            assert r["max_abs_diff"] < 1e-5
            assert np.allclose(r["recomputed"], r["cross_attentions"][layer, head], atol=1e-5)
    s, t = len(r["source_tokens"]), len(r["output_tokens"])
    assert r["encoder_attentions"].shape == (2, 2, s, s) and r["decoder_attentions"].shape == (2, 2, t, t)
    assert r["cross_attentions"].shape == (2, 2, t, s) and t == len(r["decoder_input_tokens"])
    # rows are the tokens written: </s> only where the model wrote it (random weights rarely stop)
    assert (r["output_tokens"][-1] == "</s>") != (len(r["output_ids"]) == seq2seq.MAX_TARGET)
    assert np.allclose(r["cross_attentions"].sum(-1), 1, atol=1e-5)
    assert np.allclose(np.triu(r["decoder_attentions"], 1), 0)  # causal: nothing above the diagonal


def test_the_recompute_sees_a_changed_weight(tok):
    """The check is not the model's output read back: perturb W_q after the forward and it differs."""
    model = _tiny_model(tok, layers=1, heads=2)
    x, m = seq2seq.encode_batch(tok, ["first of may nineteen fifty"], seq2seq.MAX_SOURCE)
    seen, handle = seq2seq._capture_cross_inputs(model, 0)
    with torch.inference_mode():
        out = model(input_ids=x, attention_mask=m, decoder_input_ids=torch.tensor([[1, 5, 6]]), output_attentions=True)
    handle.remove()
    with torch.inference_mode():
        same = seq2seq.recompute_cross_attention(model, seen[0], out.encoder_last_hidden_state, 0, 1)
        model.get_decoder().layers[0].encoder_attn.q_proj.weight.mul_(3.0)
        other = seq2seq.recompute_cross_attention(model, seen[0], out.encoder_last_hidden_state, 0, 1)
    theirs = out.cross_attentions[0][0, 1]
    assert float((same - theirs).abs().max()) < 1e-5 < float((other - theirs).abs().max())


def test_training_a_few_steps_lowers_the_loss_and_keeps_the_model_in_the_session():
    r = scratch.train_seq2seq("a", steps=30, learning_rate=3e-3, **TINY)
    assert r["steps_run"] == 30 and r["stopped"] is None and len(r["losses"]) == 30
    assert sum(r["losses"][-5:]) / 5 < r["losses"][0] - 1.0, r["losses"]
    assert [e["step"] for e in r["evals"]] == [0, 10, 20, 30]
    assert r["evals"][-1]["val_loss"] < r["evals"][0]["val_loss"]
    assert r["test"]["items"] == 500 and len(r["evals"][-1]["samples"]) == 4
    assert scratch.plan_seq2seq(30, 1, 2, 32, batch=32, eval_every=10)["measured"]
    j = scratch.translate_toy("a", "july fourth nineteen seventy-six", 0, 1)
    assert j["check"]["below_1e-4"] and j["layers"] == 1 and j["heads"] == 2
    assert json.loads(json.dumps(j)) == j  # plain JSON
    assert set(j["facts"]["cross"]) == {"year", "month", "day"}


def test_a_seed_gives_the_same_run():
    one = scratch.train_seq2seq("a", steps=6, seed=3, **TINY)
    two = scratch.train_seq2seq("b", steps=6, seed=3, **TINY)
    other = scratch.train_seq2seq("c", steps=6, seed=4, **TINY)
    assert one["losses"] == two["losses"] and one["losses"] != other["losses"]


def test_stop_keeps_the_steps_run():
    store = seq2seq_store.get_store()
    events = scratch.train_seq2seq_iter("a", steps=200, **{**TINY, "eval_every": 200})
    for ev in events:
        if ev["event"] == "step" and ev["step"] >= 10:
            store.request_stop("a")
        if ev["event"] == "done":
            r = ev["result"]
    assert r["stopped"] == "stopped" and 10 <= r["steps_run"] < 200
    assert store.trained("a").info["steps_run"] == r["steps_run"]


def test_the_plan_refuses_a_run_that_cannot_fit_before_training(monkeypatch):
    from backend.runtime.rates import RATES

    monkeypatch.setattr(RATES, "per_s", lambda key: 4.0)
    monkeypatch.setattr(budget, "default_seconds", lambda: 30.0)
    plan = scratch.plan_seq2seq(steps=3000)
    assert not plan["fits"] and 0 < plan["max_steps"] < 3000
    with pytest.raises(InputError, match=rf"does not fit one request.*at most {plan['max_steps']:,} steps"):
        next(scratch.train_seq2seq_iter("a", steps=3000))
    assert seq2seq_store.get_store().peek("a") is None
    assert scratch.plan_seq2seq(steps=plan["max_steps"])["fits"]
    assert not scratch.plan_seq2seq(steps=plan["max_steps"] + 1)["fits"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(width=32, heads=3), "multiple of heads"),
    (dict(learning_rate=float("nan")), "learning_rate"),
    (dict(steps=0), "steps must be between"),
    (dict(layers=9), "layers must be between"),
])
def test_bad_settings_are_refused_readably(kwargs, message):
    with pytest.raises(InputError, match=message):
        scratch.plan_seq2seq(**kwargs)


def test_translate_needs_a_model_and_checks_its_input():
    with pytest.raises(InputError, match="No tiny encoder-decoder in this session yet"):
        scratch.translate_toy("a", "first of may nineteen fifty")
    scratch.train_seq2seq("a", steps=2, **TINY)
    for text, message in (("", "empty"), ("x" * 201, "at most 200"), (None, "empty"), (7, "must be text")):
        with pytest.raises(InputError, match=message):
            scratch.translate_toy("a", text)
    with pytest.raises(InputError, match="layer must be between"):
        scratch.translate_toy("a", "first of may nineteen fifty", layer=1)
    with pytest.raises(InputError, match="head must be a whole number"):
        scratch.translate_toy("a", "first of may nineteen fifty", head=float("nan"))
    assert scratch.translate_toy("a", "5th of may nineteen fifty")["unknown_words"] == ["th"]


def test_the_download_loads_with_transformers_and_translates_like_the_session(tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    scratch.train_seq2seq("a", steps=4, **TINY)
    r = scratch.export_seq2seq("a", root=str(tmp_path))
    with zipfile.ZipFile(r["path"]) as z:
        z.extractall(tmp_path / "out")
        stem = z.namelist()[0].split("/")[0]
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= set(r["files"])
    folder = tmp_path / "out" / stem
    tok, model = AutoTokenizer.from_pretrained(folder), AutoModelForSeq2SeqLM.from_pretrained(folder)
    text = "first of may nineteen fifty"
    ids = tok(text, return_tensors="pt").input_ids
    got = tok.decode(model.generate(ids, max_new_tokens=16, do_sample=False)[0], skip_special_tokens=True)
    assert got == scratch.translate_toy("a", text)["output"]


def test_the_bertviz_views_carry_the_three_kinds():
    from backend.attention.views import encoder_decoder_views, unpack_attention

    rng = np.random.default_rng(0)
    enc, dec, crs = rng.random((2, 2, 3, 3)), rng.random((2, 2, 4, 4)), rng.random((2, 2, 4, 3))
    head, model = encoder_decoder_views(enc, dec, crs, ["a", "b", "</s>"], ["<s>", "1", "2", "3"], title="t")
    for doc in (head, model):
        assert "Cross (decoder -\\u003e encoder)" in doc or "Cross (decoder -&gt; encoder)" in doc or \
            "Cross (decoder -> encoder)" in doc
        assert "\\u003c/s\\u003e" in doc and "</s>\"" not in doc  # tokens are escaped inside the script
    with pytest.raises(ValueError, match="do not match"):
        encoder_decoder_views(enc, dec, crs[:, :, :3], ["a", "b", "</s>"], ["<s>", "1", "2", "3"])
    assert unpack_attention  # the packed format is the Attention tab's (tested there)


def test_the_notice_facts_are_read_from_the_shown_head():
    """The numbers under the figures come from the shown (layer, head) alone: a synthetic alignment."""
    from backend.scratch.seq2seq_api import facts

    src = ["may", "first", "nineteen", "fifty", "</s>"]
    out = ["1", "9", "5", "0", "-", "0", "5", "-", "0", "1", "</s>"]
    look = [2, 2, 3, 3, 4, 0, 0, 4, 1, 1, 4]  # year -> nineteen fifty, month -> may, day -> first
    cross = np.zeros((1, 2, len(out), len(src)))
    cross[0, 1, range(len(out)), look] = 1.0
    enc = np.tile(np.eye(len(src)), (1, 2, 1, 1))
    dec = np.zeros((1, 2, len(out), len(out)))
    dec[0, 1, 0, 0] = 1
    dec[0, 1, range(1, len(out)), range(len(out) - 1)] = 1  # each step looks at the token before
    r = {"layer": 0, "head": 1, "cross_attentions": cross, "encoder_attentions": enc, "decoder_attentions": dec,
         "source_tokens": src, "output_tokens": out}
    fx = facts(r)
    assert fx["cross"]["year"] == {"digits": ["1", "9", "5", "0"], "looks_at": ["nineteen", "nineteen", "fifty", "fifty"],
                                   "positions": [2, 2, 3, 3]}
    assert fx["cross"]["month"]["looks_at"] == ["may", "may"] and fx["cross"]["day"]["looks_at"] == ["first", "first"]
    assert fx["encoder_near"] == 5 and fx["decoder_previous"] == 10 and fx["decoder_start"] == 0
