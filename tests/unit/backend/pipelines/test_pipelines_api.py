"""Unit: the Pipelines entry points by role, through the real hub, on tiny saved checkpoints.

Each tiny model is saved with a real tokenizer into a fresh folder and given as the model box
(`override=`), so the hub resolves, loads and caches it as it would a user's directory. The
embedding-similarity method only comes from a profile; there, the hub's resolver is pointed
at a saved tiny BERT. Numbers are read (and refused) before any model loads.
"""

from __future__ import annotations

import inspect
import math

import pytest
import torch
from transformers import (
    BartConfig, BartForConditionalGeneration, BertForMaskedLM, BertForQuestionAnswering,
    BertForSequenceClassification, BertForTokenClassification, MarianConfig, MarianMTModel,
)

from backend.runtime import config
from backend.hub import loader
from backend import hub, pipelines
from backend.runtime.errors import InputError
from backend.pipelines import tasks
from components.pipelines.examples import LETTER, PRAISE
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_bert, tiny_llama

NER_LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
NO_DIR = "/no/such/model/dir"


def bert_head(cls, **config_overrides):
    return cls(tiny_bert(**config_overrides).config)


def sst2():
    return bert_head(BertForSequenceClassification, id2label={0: "NEGATIVE", 1: "POSITIVE"},
                     label2id={"NEGATIVE": 0, "POSITIVE": 1})


def seq2seq_config(cls, tok, **extra):
    torch.manual_seed(0)
    eos = tok.eos_token_id
    ids = dict(vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id or eos,
               eos_token_id=eos, decoder_start_token_id=tok.bos_token_id or eos, forced_eos_token_id=None)
    return cls(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
               encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=128, **ids, **extra)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Folders of tiny checkpoints, one per dedicated-model role."""
    root = tmp_path_factory.mktemp("pipelines-api")
    minilm, smol = minilm_tokenizer(), smollm2_tokenizer()
    ner = bert_head(BertForTokenClassification, id2label=dict(enumerate(NER_LABELS)),
                    label2id={l: i for i, l in enumerate(NER_LABELS)})
    mlm = bert_head(BertForMaskedLM)
    with torch.no_grad():
        ner.classifier.bias.zero_()
        ner.classifier.bias[NER_LABELS.index("I-LOC")] = 50.0  # every token I-LOC
        mlm.cls.predictions.bias[minilm.convert_tokens_to_ids("paris")] = 100.0
    bart = BartForConditionalGeneration(seq2seq_config(
        BartConfig, smol, task_specific_params={"summarization": {"num_beams": 2}}))
    marian = MarianMTModel(seq2seq_config(MarianConfig, smol))
    folders = {
        "sentiment": (sst2(), minilm),
        "ner": (ner, minilm),
        "qa": (bert_head(BertForQuestionAnswering), minilm),
        "fill_mask": (mlm, minilm),
        "embedder": (tiny_bert(), minilm),
        "summarization": (bart, smol),
        "opus-mt-en-de": (marian, smol),  # the name tells the language pair, as the Hub id would
        "text_generation": (tiny_llama(), smol),
    }
    return {name: str(save_tiny(model, tok, root / name)) for name, (model, tok) in folders.items()}


@pytest.fixture
def embedding_profile(saved, monkeypatch):
    """Sentiment and zero-shot served by embedding similarity, as the `local` profile does."""
    def resolve(role, override=None, profile=None):
        return hub.Resolved(role, "tiny-embedder", "embedder", config.METHOD_EMBEDDING, "package",
                               "test profile", saved["embedder"])

    monkeypatch.setattr(loader, "resolve", resolve)


class Recorder:
    """A `progress(fraction, desc)` callable that remembers what it heard."""

    def __init__(self):
        self.calls = []

    def __call__(self, fraction, desc=None):
        self.calls.append((fraction, desc))


# ----------------------------------------------------------------------------- contract

def test_package_exports_the_entry_points_and_keeps_model_level_signatures():
    names = ["classify", "zero_shot", "ner", "qa", "summarize", "translate", "fill_mask", "generate_text"]
    assert [n for n in pipelines.__all__ if n in names] == names
    for name in names:
        params = inspect.signature(getattr(pipelines, name)).parameters
        tail = [p for p in params if p != "plan"]  # the server tasks also take the request's plan, last
        assert tail[-2:] == ["override", "progress"], name
        assert params["override"].default is None and params["progress"].default is None
        assert "plan" not in params or (list(params)[-1] == "plan" and params["plan"].default is None), name
    assert pipelines.SENTIMENT_DEFAULT.splitlines()[0].startswith("POSITIVE: ")
    # Other packages call these model-level functions (the search tab's reader): same names, same shapes.
    from backend.engines.tasks.instruct import chat_generate
    from backend.engines.qa.extractive_qa import answer_question

    assert list(inspect.signature(chat_generate).parameters) == [
        "model", "tokenizer", "messages", "max_new_tokens", "generate_kwargs"]
    assert list(inspect.signature(answer_question).parameters) == [
        "model", "tokenizer", "question", "context", "top_n", "max_length", "stride", "max_answer_tokens"]


# ------------------------------------------------------------------------ classification

def test_classify_batch_through_the_hub(tmp_path):
    folder = str(save_tiny(sst2(), minilm_tokenizer(), tmp_path / "sst2"))  # fresh: not loaded yet
    progress = Recorder()
    r = pipelines.classify(f"{LETTER}\n\n{PRAISE}\n", True, override=folder, progress=progress)
    assert progress.calls == [(0.05, "Loading the sentiment model (first use only)"), (0.4, "Running")]
    assert r["task"] == "classify" and r["method"] == "model"
    assert r["model"]["checkpoint"] == folder and r["model"]["source"] == "local-dir"
    assert [x["sequence"] for x in r["results"]] == [LETTER, PRAISE]
    direct = tasks.classify(hub.load("sentiment", folder), [LETTER, PRAISE])
    assert [x["scores"] for x in r["results"]] == [x["scores"] for x in direct["results"]]
    again = Recorder()
    single = pipelines.classify(f"{LETTER}\n{PRAISE}", False, override=folder, progress=again)
    assert again.calls == [(0.4, "Running")]  # loaded once, cached
    assert [x["sequence"] for x in single["results"]] == [f"{LETTER}\n{PRAISE}"]  # one text, not two


def test_classify_label_descriptions_with_a_dedicated_model(saved):
    # The untouched default box is not worth a notice; a user's own descriptions are.
    quiet = pipelines.classify(LETTER, False, pipelines.SENTIMENT_DEFAULT, override=saved["sentiment"])
    assert not any("ignored" in n for n in quiet["notices"])
    loud = pipelines.classify(LETTER, False, "HAPPY: glad\nSAD: sad", override=saved["sentiment"])
    assert any("Label descriptions are ignored" in n for n in loud["notices"])
    assert sorted(loud["results"][0]["labels"]) == ["NEGATIVE", "POSITIVE"]


def test_classify_by_embedding_similarity(embedding_profile):
    text = "Please send me the Megatron figure I paid for."
    r = pipelines.classify(text, False, f"EXACT: {text}\nOTHER: A poem about the sea at night.")
    assert r["method"] == "embedding-similarity" and r["model"]["checkpoint"] == "tiny-embedder"
    assert r["results"][0]["labels"][0] == "EXACT"
    assert r["results"][0]["cosines"][0] == pytest.approx(1.0, abs=1e-4)
    for box in (pipelines.SENTIMENT_DEFAULT, "", None):
        assert pipelines.classify(text, False, box)["label_descriptions"] == {
            "POSITIVE": "A happy, satisfied, positive message: the writer is pleased and thankful.",
            "NEGATIVE": "An angry, disappointed, negative complaint: the writer is unhappy about a problem.",
        }


def test_zero_shot_by_embedding_similarity(embedding_profile):
    r = pipelines.zero_shot(f"{LETTER}\n{PRAISE}", "complaint, praise", "true", "This is a {}.", True)
    assert r["multi_label"] is True and len(r["results"]) == 2
    assert r["label_descriptions"] == {"complaint": "This is a complaint.", "praise": "This is a praise."}
    single = pipelines.zero_shot(LETTER, ["complaint", "praise"])
    assert single["multi_label"] is False and sum(single["results"][0]["scores"]) == pytest.approx(1.0)
    assert single["label_descriptions"]["praise"] == "This text is about praise."
    with pytest.raises(InputError, match="multi_label must be true or false"):
        pipelines.zero_shot(LETTER, "a, b", "maybe")


# ---------------------------------------------------------------------------- NER, QA

def test_ner_per_line(saved):
    lines = ["Optimus Prime visited Detroit.", "Megatron stayed home."]
    r = pipelines.ner("\n".join(lines), "none", True, override=saved["ner"])
    assert r["aggregation"] == "none" and [x["text"] for x in r["results"]] == lines
    for res in r["results"]:  # "none": one I-LOC row per sub-word token
        n_tokens = len(minilm_tokenizer()(res["text"], add_special_tokens=False)["input_ids"])
        assert len(res["entities"]) == n_tokens and {e["entity_group"] for e in res["entities"]} == {"I-LOC"}
    whole = "\n".join(lines)
    simple = pipelines.ner(whole, override=saved["ner"])  # not batch: one text, its I-LOC tokens one span
    assert [x["text"] for x in simple["results"]] == [whole] and simple["aggregation"] == "simple"
    assert [(e["entity_group"], e["start"], e["end"]) for e in simple["results"][0]["entities"]] == [
        ("LOC", 0, len(whole))]
    with pytest.raises(InputError, match="aggregation must be one of none, simple, first, average, max"):
        pipelines.ner(LETTER, "loudest", override=saved["ner"])


def test_qa_top_n_from_the_slider_or_json(saved):
    r = pipelines.qa(LETTER, "What did Bumblebee order?", 2.0, override=saved["qa"])
    assert r["task"] == "qa" and r["method"] == "model" and len(r["answers"]) == 2
    for a in r["answers"]:
        assert LETTER[a["start"]:a["end"]] == a["answer"] and a["match"] == "exact"
    assert len(pipelines.qa(LETTER, "Who?", "4", override=saved["qa"])["answers"]) == 4


@pytest.mark.parametrize("top_n,message", [
    (float("nan"), "top_n must be a whole number, got nan"),
    ("three", "top_n must be a whole number, got 'three'"),
    (2.5, "top_n must be a whole number"),
    (0, "top_n must be between 1 and 20, got 0"),
    (21, "top_n must be between 1 and 20, got 21"),
])
def test_qa_bad_top_n_is_refused_before_loading(top_n, message):
    model_hub = hub.get_hub()
    before = model_hub.load_count
    with pytest.raises(InputError, match=message):
        pipelines.qa(LETTER, "Who?", top_n, override=NO_DIR)  # the number is read first
    assert model_hub.load_count == before


# ----------------------------------------------------------------------- seq2seq tasks

def test_summarize_settings_from_the_widgets(saved):
    r = pipelines.summarize(LETTER, 6.0, 2.0, 0.0, "Bumblebee got the wrong figure.", override=saved["summarization"])
    assert r["task"] == "summarize" and r["model"]["checkpoint"] == saved["summarization"]
    assert r["settings"]["num_beams"] == 2  # 0 beams: the checkpoint's own default
    assert (r["settings"]["max_new_tokens"], r["settings"]["min_new_tokens"]) == (6, 2)
    assert set(r["rouge"]) == {"rouge1", "rouge2", "rougeL"}
    three = pipelines.summarize(LETTER, 6, 0, 3, override=saved["summarization"])
    assert three["settings"]["num_beams"] == 3 and "rouge" not in three
    with pytest.raises(InputError, match="minimum length"):
        pipelines.summarize(LETTER, 8, 20, 0, override=saved["summarization"])


@pytest.mark.parametrize("args,message", [
    ((float("nan"), 0, 0), "max_new_tokens must be a whole number, got nan"),
    ((0, 0, 0), "max_new_tokens must be between 1 and 512, got 0"),
    ((600, 0, 0), "max_new_tokens must be between 1 and 512, got 600"),
    ((8, -1, 0), "min_new_tokens must be between 0 and 512, got -1"),
    ((8, "x", 0), "min_new_tokens must be a whole number, got 'x'"),
    ((8, 0, 9), "num_beams must be between 0 and 8, got 9"),
    ((8, 0, float("inf")), "num_beams must be a whole number, got inf"),
])
def test_summarize_bad_numbers_are_refused_before_loading(args, message):
    model_hub = hub.get_hub()
    before = model_hub.load_count
    with pytest.raises(InputError, match=message):
        pipelines.summarize(LETTER, *args, override=NO_DIR)
    assert model_hub.load_count == before


def test_translate_through_the_hub(saved):
    folder = saved["opus-mt-en-de"]
    r = pipelines.translate("I ordered a Megatron figure.", "en", "de", 6, 0, "Ich habe Megatron bestellt.",
                            override=folder)
    assert (r["source_lang"], r["target_lang"], r["language_pair"]) == ("en", "de", "English -> German")
    assert r["output_tokens"] == 6 and r["bleu"]["bleu"] == 0.0  # random tokens share no n-gram
    assert "num_beams" not in r["settings"]  # 0 beams and the checkpoint sets none: generate's default
    with pytest.raises(InputError, match="num_beams must be between 0 and 8, got -1"):
        pipelines.translate("Hello.", "en", "de", 6, -1, override=folder)
    with pytest.raises(InputError, match="max_new_tokens must be a whole number"):
        pipelines.translate("Hello.", "en", "de", "many", override=folder)


# ---------------------------------------------------------------- fill-mask, generation

def test_fill_mask_through_the_hub(saved):
    r = pipelines.fill_mask("The capital of France is [MASK].", "3", override=saved["fill_mask"])
    assert [c["token_str"] for c in r["candidates"]][0] == "paris" and len(r["candidates"]) == 3
    assert r["model"]["source"] == "local-dir"
    with pytest.raises(InputError, match="top_k must be between 1 and 50, got 51"):
        pipelines.fill_mask("The capital of France is [MASK].", 51, override=NO_DIR)


def test_fill_mask_offline_is_the_decoder(saved, monkeypatch):
    """The local profile has no masked LM: its fill_mask role is the decoder's checkpoint, with the
    decoder method; the entry point then serves it by left-context candidates + whole-sentence rerank."""
    local = hub.resolve("fill_mask", profile="local")
    assert (local.kind, local.method) == ("causal_lm", "decoder-fill-mask")
    assert local.location == hub.resolve("decoder", profile="local").location  # the same weights, loaded once

    def resolve(role, override=None, profile=None):
        return hub.Resolved(role, "tiny-decoder", "causal_lm", "decoder-fill-mask", "package", "test profile",
                               saved["text_generation"])

    monkeypatch.setattr(loader, "resolve", resolve)
    r = pipelines.fill_mask("Paris is the <mask> of France.", "4")
    assert r["method"] == r["model"]["method"] == "decoder-fill-mask" and len(r["candidates"]) == 4
    assert r["method_label"].startswith("decoder fill-mask") and r["n_reranked"] == 20
    with pytest.raises(InputError, match="2 \\[MASK\\]"):
        pipelines.fill_mask("[MASK] and <mask>")


def test_generate_text_stream_through_the_hub(saved):
    folder = saved["text_generation"]
    steps = list(pipelines.generate_text_stream("Dear Amazon,", "greedy", 4, override=folder))
    assert [n for _, n, r in steps[:-1]] == [1, 2, 3, 4]
    final = steps[-1][2]
    assert final == {**pipelines.generate_text("Dear Amazon,", "greedy", 4, override=folder),
                     "seconds": final["seconds"]} | {"decoding": final["decoding"]}
    assert final["generated_text"] == "Dear Amazon," + steps[-1][0]
    with pytest.raises(InputError, match="seed must be a whole number"):
        next(pipelines.generate_text_stream("Dear Amazon,", seed="lucky", override=NO_DIR))  # before any load


def test_generate_text_through_the_hub(saved):
    folder = saved["text_generation"]
    r = pipelines.generate_text("Dear Amazon,", "greedy", 5.0, 0.7, 50.0, 0.9, 4.0, 0.0, override=folder)
    assert r["task"] == "generate_text" and r["model"]["checkpoint"] == folder
    assert r["generated_text"] == "Dear Amazon," + r["completion"] and r["decoding"]["n_new_tokens"] == 5
    direct = tasks.generate_text(hub.load("text_generation", folder), "Dear Amazon,",
                                 {"strategy": "greedy", "max_new_tokens": 5})
    assert direct["generated_text"] == r["generated_text"]
    sampled = pipelines.generate_text("Dear Amazon,", "sample", 5, 0.7, 50, 0.9, 4, "7", override=folder)
    assert sampled["decoding"]["settings"]["seed"] == 7
    unseeded = pipelines.generate_text("Dear Amazon,", "sample", 5, 0.7, 50, 0.9, 4, "", override=folder)
    assert isinstance(unseeded["decoding"]["settings"]["seed"], int)  # a random seed, reported
    with pytest.raises(InputError, match="seed must be a whole number .* got 'lucky'"):
        pipelines.generate_text("Dear Amazon,", seed="lucky", override=NO_DIR)
    with pytest.raises(InputError, match="prompt is empty"):
        pipelines.generate_text("  ", override=folder)


def test_texts_must_be_text():
    with pytest.raises(InputError, match="The text must be text, got a number"):
        pipelines.classify(42, True, override=NO_DIR)
    with pytest.raises(InputError, match="batch must be true or false"):
        pipelines.classify(LETTER, math.nan, override=NO_DIR)
