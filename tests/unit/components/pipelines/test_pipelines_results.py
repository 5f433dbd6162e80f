"""Unit: what the Pipelines tab shows is true for what the learner just did (issue "truth").

A score only against the reference passed with the text; the book's first-three-sentences
baseline beside a summary; a result's `seconds` is the whole wait, first load included, and
names what it waited for; QA says when it gives fewer spans than asked; the NER table shows
only columns with values; the generation knobs a strategy ignores are greyed out.
"""

from __future__ import annotations

import time

import pytest
import torch
from transformers import BartForConditionalGeneration, BertForQuestionAnswering, MarianMTModel

from backend import hub, pipelines
from backend.pipelines import api as pipelines_api
from backend.pipelines.metrics import lead_baseline, rouge, split_sentences
from components.pipelines import references as ref
from components.pipelines import ui as tab
from components.pipelines import plots as show
from components.pipelines.examples import LETTER
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_bert
from tests.helpers.virtual_clock import installed

EIGHT = ("Dr. Smith ordered a Megatron figure. It came from Germany! Was it the right one? No. "
         "The parcel held Optimus Prime.\nHe wrote to the store. They said sorry. A new parcel is on its way.")


def _seq2seq(cls, tok, **extra):
    torch.manual_seed(0)
    eos = tok.eos_token_id
    return cls(cls.config_class(
        d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=128, vocab_size=len(tok),
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id or eos, eos_token_id=eos,
        decoder_start_token_id=tok.bos_token_id or eos, forced_eos_token_id=None, **extra))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipelines-truth")
    smol = smollm2_tokenizer()
    return {
        "summarization": str(save_tiny(_seq2seq(BartForConditionalGeneration, smol), smol, root / "bart")),
        "translation": str(save_tiny(_seq2seq(MarianMTModel, smol), smol, root / "opus-mt-en-de")),
        "qa": str(save_tiny(BertForQuestionAnswering(tiny_bert().config), minilm_tokenizer(), root / "qa")),
    }


# ------------------------------------------------------------------ the book's baseline

def test_sentences_split_without_nltk():
    assert split_sentences(EIGHT) == [
        "Dr. Smith ordered a Megatron figure.", "It came from Germany!", "Was it the right one?", "No.",
        "The parcel held Optimus Prime.", "He wrote to the store.", "They said sorry.",
        "A new parcel is on its way."]
    assert split_sentences("J. R. R. Tolkien lived in the U.S. for a while. Then he left.") == [
        "J. R. R. Tolkien lived in the U.S. for a while.", "Then he left."]
    assert split_sentences('"Stop." She did. It cost 3.5 dollars.') == ['"Stop."', "She did.", "It cost 3.5 dollars."]
    assert split_sentences("") == [] and split_sentences("no full stop") == ["no full stop"]


def test_baseline_is_the_first_three_sentences():
    b = lead_baseline(EIGHT)
    assert b["summary"] == "Dr. Smith ordered a Megatron figure. It came from Germany! Was it the right one?"
    assert (b["sentences_in_text"], b["sentences_used"]) == (8, 3) and "first three" in b["name"]
    assert lead_baseline("One. Two.")["summary"] == "One. Two."


def test_summary_and_baseline_are_scored_against_the_reference_given(saved):
    ref = "Dr. Smith got Optimus Prime instead of Megatron; a new parcel is coming."
    r = pipelines.summarize(EIGHT, 8, 0, 0, ref, override=saved["summarization"])
    base = r["baseline"]
    assert base["summary"] == lead_baseline(EIGHT)["summary"]
    assert base["rouge"] == rouge(base["summary"], ref) and r["rouge"] == rouge(r["summary"], ref)
    assert base["rouge"]["rouge1"]["f1"] > 0.2  # the baseline shares words with the reference
    assert r["reference"] == ref and "this request" in r["scored_against"]
    table = show.rouge_table(r)
    assert "model summary" in table and "baseline: first 3 sentences" in table
    assert f"{base['rouge']['rouge1']['f1']:.2f}" in table
    fig = show.rouge_bars(r)
    assert [t.name for t in fig.data] == ["model summary", "baseline: first 3 sentences", "extractive (MMR)"]
    assert "extractive (MMR)" in table and r["extractive"]["rouge"] == rouge(r["extractive"]["summary"], ref)


def test_no_reference_no_score(saved):
    r = pipelines.summarize(EIGHT, 8, 0, 0, "", override=saved["summarization"])
    assert "rouge" not in r and "reference" not in r and r["scored_against"] is None
    assert "rouge" not in r["baseline"] and r["baseline"]["summary"]  # the baseline text, unscored
    assert any("No reference" in n for n in r["notices"])
    assert show.rouge_bars(r) is None and show.rouge_table(r).startswith("*No ROUGE")
    t = pipelines.translate("I ordered a Megatron figure.", "en", "de", 6, 0, None,
                            override=saved["translation"])
    assert "bleu" not in t and t["scored_against"] is None
    assert "no BLEU" in show.bleu_line(t) and "BLEU " not in show.bleu_line(t).replace("no BLEU", "")
    t2 = pipelines.translate("I ordered a Megatron figure.", "en", "de", 6, 0, "Ich habe bestellt.",
                             override=saved["translation"])
    assert "bleu" in t2 and "against the reference given with this text" in show.bleu_line(t2)


def test_editing_the_text_clears_its_reference():
    assert ref._text_edited("Bumblebee ordered a figure.") == ("", ref.REFERENCE_CLEARED)
    skipped = ref._text_edited("  ")
    assert all(isinstance(x, dict) and x.get("__type__") == "update" and len(x) == 1 for x in skipped)
    assert ref._reference_set("a reference") == ref.REFERENCE_NOTE


def test_an_example_reference_sent_with_another_text_is_dropped():
    from components.pipelines.examples import EIFFEL, EIFFEL_SUMMARY

    assert ref._own_reference(EIFFEL, EIFFEL_SUMMARY, ref.SUMMARY_PAIRS) == (EIFFEL_SUMMARY, None)
    assert ref._own_reference("My own text.", EIFFEL_SUMMARY, ref.SUMMARY_PAIRS) == ("", EIFFEL)
    assert ref._own_reference("My own text.", "My own reference.", ref.SUMMARY_PAIRS) == ("My own reference.", None)
    r = {"notices": ["No reference given with this text: no ROUGE."]}
    ref._say_dropped(r, EIFFEL)
    assert r["notices"][0].startswith("The reference was not used") and "reference_dropped" in r


def test_fallback_output_is_labelled_as_such():
    r = {"method": "instruct-fallback", "model": {"checkpoint": "SmolLM2"}}
    assert "instruct-model fallback" in show.output_label(r, "Translation", "translate")
    assert show.output_label({"method": "model", "model": {"checkpoint": "opus"}}, "Translation",
                             "translate") == "Translation by opus"


# ------------------------------------------------------------------ the learner's wait

def test_seconds_is_the_whole_wait_and_names_the_first_load(saved, tmp_path, monkeypatch):
    """On a virtual clock (the request's own timing, moved only by the fake load): the first use's
    load takes 0.9 s, a later call's wrapper 0.6 s, the model's work none, so every figure is exact."""
    folder = str(save_tiny(BertForQuestionAnswering(tiny_bert().config), minilm_tokenizer(), tmp_path / "fresh"))
    real, clock, calls = hub.load, installed(monkeypatch, pipelines_api), []

    def slow_load(*args, **kwargs):  # a first load that takes a visible while; from memory, a shorter one
        clock.sleep(0.6 if calls else 0.9)
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(hub, "load", slow_load)
    start = clock.perf_counter()
    r = pipelines.qa(LETTER, "Who wrote?", 2, override=folder)
    wall = clock.perf_counter() - start
    (w,) = r["waited"]
    assert w["for"] == "loading the qa model (first use: reading its weights)" and w["seconds"] == 0.9
    assert r["seconds"] == pytest.approx(wall, abs=1e-4)  # the whole wait, the load included
    line = show.wait_line(r)
    assert "Waited" in line and "0.90 s" in line and "first use" in line
    again = pipelines.qa(LETTER, "Who wrote?", 2, override=folder)
    assert again["waited"] == [] and show.wait_line(again) == ""  # in memory: nothing to wait for
    assert again["seconds"] == pytest.approx(0.6, abs=1e-4)  # the slow wrapper still runs; no first use named


def test_a_stream_reports_the_whole_wait_too(saved):
    from tests.helpers.tiny_models import tiny_llama

    folder = str(save_tiny(tiny_llama(), smollm2_tokenizer(), saved["qa"] + "-gen"))
    start = time.perf_counter()
    *_, (_, _, r) = pipelines.generate_text_stream("Dear Amazon,", "greedy", 3, override=folder)
    wall = time.perf_counter() - start
    assert r["waited"] and r["waited"][0]["for"].startswith("loading the text_generation model (first use")
    assert r["waited"][0]["seconds"] <= r["seconds"] <= wall + 1e-3


# ------------------------------------------------------------------ small truths

def test_qa_says_when_it_gives_fewer_spans_than_asked(saved):
    r = pipelines.qa("Hi there.", "Who?", 20, override=saved["qa"])
    assert r["top_n"]["asked"] == 20 and r["top_n"]["given"] == len(r["answers"]) < 20
    assert any(n.startswith(f"Asked for 20 answer spans; {len(r['answers'])} given") for n in r["notices"])
    full = pipelines.qa(LETTER, "Who?", 2, override=saved["qa"])
    assert full["top_n"] == {"asked": 2, "given": 2} and not any("Asked for" in n for n in full["notices"])


def test_ner_table_shows_only_columns_with_values():
    fallback = [{"text": "Tim Cook at Apple.", "entities": [
        {"entity_group": "PER", "word": "Tim Cook", "score": None, "start": 0, "end": 8}]}]
    frame = show.entity_rows(fallback)
    assert list(frame.columns) == ["type", "entity", "start", "end"]
    assert "no score column" in show.entity_table_label(fallback)
    scored = [{"text": "a", "entities": [{"entity_group": "LOC", "word": "a", "score": 0.91234, "start": 0, "end": 1}]},
              {"text": "b", "entities": [{"entity_group": "LOC", "word": "b", "score": 0.5, "start": 0, "end": 1}]}]
    frame = show.entity_rows(scored)
    assert list(frame.columns) == ["text #", "type", "entity", "score", "start", "end"]
    assert frame["text #"].tolist() == [1, 2] and frame["score"].tolist() == [0.9123, 0.5]
    assert show.entity_table_label(scored) == "Entities"


@pytest.mark.parametrize("strategy,on", [
    ("greedy", set()), ("sample", {"temperature", "top_k", "top_p", "seed"}), ("beam", {"num_beams"})])
def test_generation_knobs_a_strategy_ignores_are_greyed_out(strategy, on):
    updates = tab._knobs_for(strategy)
    assert {k for k, u in zip(tab.KNOB_ORDER, updates) if u["interactive"]} == on


# ------------------------------------------------------------------ messages

def test_missing_model_messages_are_plain_sentences_with_the_right_fix(monkeypatch):
    from backend.hub import policy
    from backend.runtime.errors import ModelLoadError

    monkeypatch.setattr(policy, "in_hf_cache", lambda repo: False)
    monkeypatch.setenv("TLAB_PROFILE", "local")
    with pytest.raises(ModelLoadError) as info:  # the model box names an uncached Hub id on `local`
        hub.resolve("sentiment", "someone/not-cached-model")
    message = str(info.value)
    assert "`" not in message and "local profile" not in message and "Empty the model box" in message
    monkeypatch.setenv("TLAB_MODEL_SENTIMENT", "someone/not-cached-model")
    with pytest.raises(ModelLoadError, match="Unset TLAB_MODEL_SENTIMENT") as info:
        hub.resolve("sentiment")
    monkeypatch.delenv("TLAB_MODEL_SENTIMENT")
    monkeypatch.setenv("TLAB_PROFILE", "book")  # the book's checkpoint, offline: the local profile is the fix
    with pytest.raises(ModelLoadError, match="--profile local") as info:
        hub.resolve("sentiment")
    assert "`" not in str(info.value)


def test_a_text_changed_without_a_keystroke_clears_an_examples_reference_left_for_another_text():
    """A link, a hand-off or a Start button sets the text with no `input` event: the box must not keep the
    example's reference written for the old text (the run would drop it, the box still showed it)."""
    from components.pipelines.examples import EIFFEL, EIFFEL_SUMMARY, SUMMARY_EXAMPLE, SUMMARY_REFERENCE

    changed = ref._text_changed(ref.SUMMARY_PAIRS)
    assert changed(EIFFEL, SUMMARY_REFERENCE) == ("", ref.REFERENCE_CLEARED)
    for kept in (changed(EIFFEL, EIFFEL_SUMMARY), changed(SUMMARY_EXAMPLE, SUMMARY_REFERENCE),
                 changed("My text.", "My own reference."), changed("My text.", "")):
        assert all(isinstance(x, dict) and x.get("__type__") == "update" and len(x) == 1 for x in kept)


def test_the_summary_and_translation_text_boxes_clear_an_examples_reference_on_any_change():
    import gradio as gr

    from components.pipelines import ui as pipelines_ui
    from components.shell import links

    links.reset()
    with gr.Blocks() as demo:
        pipelines_ui.build()
    ids = {c._id: getattr(c, "elem_id", None) for c in demo.blocks.values()}
    wired = {(ids[t[0]], ids[fn.outputs[0]._id]) for fn in demo.fns.values() if getattr(fn.fn, "__name__", "") == "changed"
             for t in fn.targets if t[1] == "change"}
    assert {("pl-summarize-text", "pl-summarize-reference"), ("pl-translate-text", "pl-translate-reference")} <= wired
