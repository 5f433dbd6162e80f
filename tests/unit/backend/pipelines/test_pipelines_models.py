"""Unit: every task runner on tiny random models of the real architecture families.

DistilBert (sequence classification, QA), BERT (token classification, masked LM, NLI-style
zero-shot), BART and Marian (seq2seq), Llama (the instruct fallback), all built from configs
with real tokenizers. Random weights say nothing about quality; these tests check the
plumbing: shapes, batching order, character offsets, stride windows, aggregation, notices.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import sacrebleu
import torch
from transformers import (
    BartConfig, BartForConditionalGeneration, BertForMaskedLM, BertForSequenceClassification,
    BertForTokenClassification, DistilBertConfig, DistilBertForQuestionAnswering,
    DistilBertForSequenceClassification, MarianConfig, MarianMTModel,
)

from backend.runtime.errors import InputError
from backend.engines.tasks import instruct as ins
from backend.pipelines import tasks as P
from backend.engines.qa.extractive_qa import answer_question, best_spans
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer, tiny_bert, tiny_llama

LETTER = ("Dear Amazon, two weeks ago I ordered a Megatron action figure from your online store in "
          "Germany. When I opened the parcel I found an Optimus Prime figure instead! Sincerely, Bumblebee")


# ------------------------------------------------------------------------ builders

def lm(model, tok, method="model", checkpoint="tiny"):
    """What the runners need of a `LoadedModel` (the hub path is tested in test_pipelines_api)."""
    return SimpleNamespace(model=model.eval(), tokenizer=tok, method=method, checkpoint=checkpoint,
                           describe=lambda: {"checkpoint": checkpoint, "source": "test", "method": method})


def bert_head(cls, **config_overrides):
    """A BERT task head on the shared tiny BERT config (MiniLM vocabulary)."""
    return cls(tiny_bert(**config_overrides).config)


def distil_kwargs(tok, **extra):
    torch.manual_seed(0)
    return dict(vocab_size=tok.vocab_size, dim=32, n_layers=2, n_heads=4, hidden_dim=37,
                max_position_embeddings=512, **extra)


# --------------------------------------------------------------------- classification

@pytest.fixture(scope="module")
def sst2():
    tok = minilm_tokenizer()
    cfg = DistilBertConfig(**distil_kwargs(tok, id2label={0: "NEGATIVE", 1: "POSITIVE"},
                                           label2id={"NEGATIVE": 0, "POSITIVE": 1}))
    return lm(DistilBertForSequenceClassification(cfg), tok)


def test_classify_batch_matches_single_forwards(sst2):
    texts = ["I love it.", LETTER, "Terrible service, never again, what a waste of money.", "ok"]
    r = P.classify(sst2, "\n".join(texts).splitlines())
    assert r["method"] == "model" and r["task"] == "classify" and r["seconds"] >= 0
    assert [x["sequence"] for x in r["results"]] == texts
    tok, model = sst2.tokenizer, sst2.model
    for text, res in zip(texts, r["results"]):
        assert sorted(res["labels"]) == ["NEGATIVE", "POSITIVE"]
        assert sum(res["scores"]) == pytest.approx(1.0, abs=1e-5)
        assert res["scores"] == sorted(res["scores"], reverse=True)
        with torch.inference_mode():
            e = tok(text, return_tensors="pt")
            p = model(input_ids=e["input_ids"], attention_mask=e["attention_mask"]).logits.softmax(-1)[0]
        expected = dict(zip(["NEGATIVE", "POSITIVE"], p.tolist()))
        for label, score in zip(res["labels"], res["scores"]):
            assert score == pytest.approx(expected[label], abs=1e-5)


def test_classify_truncates_with_notice_and_rejects_bad_input(sst2):
    r = P.classify(sst2, ["word " * 700])
    assert any("reads at most 512" in n for n in r["notices"])
    with pytest.raises(InputError, match="empty"):
        P.classify(sst2, ["  ", ""])
    with pytest.raises(InputError, match="at most 64"):
        P.classify(sst2, [f"line {i}" for i in range(65)])


def test_wrong_kind_of_checkpoint_is_refused(sst2):
    sst2.model.config.architectures = ["BertModel"]
    try:
        with pytest.raises(InputError, match="not a model for text classification"):
            P.classify(sst2, ["hello"])
    finally:
        sst2.model.config.architectures = None


# ---------------------------------------------------------------- embedding similarity

@pytest.fixture(scope="module")
def embedder():
    return lm(tiny_bert(), minilm_tokenizer(), method="embedding-similarity")


def test_similarity_classification_picks_identical_description(embedder):
    text = "Please send me the Megatron figure I paid for."
    desc = {"EXACT": text, "OTHER": "A poem about the sea at night.", "THIRD": "Stock prices fell."}
    r = P.classify(embedder, [text], label_descriptions=desc)
    res = r["results"][0]
    assert res["labels"][0] == "EXACT"
    assert res["cosines"][0] == pytest.approx(1.0, abs=1e-4)
    assert sum(res["scores"]) == pytest.approx(1.0)
    assert r["label_descriptions"] == desc and "softmax" in r["scoring"] and r["notices"] == []
    long = P.classify(embedder, ["word " * 300], label_descriptions=desc)
    assert any("first 256" in n for n in long["notices"])


def test_zero_shot_by_similarity_single_and_multi(embedder):
    labels = ["complaint", "praise", "question"]
    single = P.zero_shot(embedder, [LETTER, "Is it in stock?"], ", ".join(labels))
    multi = P.zero_shot(embedder, [LETTER], labels, multi_label=True, template="This is a {}.")
    for res in single["results"]:
        assert sorted(res["labels"]) == sorted(labels) and sum(res["scores"]) == pytest.approx(1.0)
    assert multi["multi_label"] and "sigmoid" in multi["scoring"]
    assert multi["label_descriptions"]["praise"] == "This is a praise."
    with pytest.raises(InputError, match="No candidate labels"):
        P.zero_shot(embedder, [LETTER], "")
    with pytest.raises(InputError, match="at most"):
        P.zero_shot(embedder, [LETTER], [f"l{i}" for i in range(100)])
    with pytest.raises(InputError, match=r"\{\}"):
        P.zero_shot(embedder, [LETTER], labels, template="no slot")


def test_zero_shot_nli_through_pipeline():
    tok = minilm_tokenizer()
    labels = {0: "contradiction", 1: "neutral", 2: "entailment"}
    nli = lm(bert_head(BertForSequenceClassification, id2label=labels, label2id={v: k for k, v in labels.items()}),
             tok)
    r = P.zero_shot(nli, [LETTER], ["complaint", "praise"], multi_label=False)
    res = r["results"][0]
    assert sorted(res["labels"]) == ["complaint", "praise"] and sum(res["scores"]) == pytest.approx(1.0, abs=1e-5)
    m = P.zero_shot(nli, [LETTER], ["complaint", "praise"], multi_label=True)["results"][0]
    assert all(0 <= s <= 1 for s in m["scores"])
    # a classifier without an entailment label cannot do NLI zero-shot
    sentiment = bert_head(BertForSequenceClassification, id2label={0: "NEG", 1: "POS"}, label2id={"NEG": 0, "POS": 1})
    with pytest.raises(InputError, match="entailment"):
        P.zero_shot(lm(sentiment, tok), [LETTER], ["a", "b"])


# -------------------------------------------------------------------------------- NER

NER_LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


@pytest.fixture(scope="module")
def ner_model():
    tok = minilm_tokenizer()
    model = bert_head(BertForTokenClassification, id2label=dict(enumerate(NER_LABELS)),
                      label2id={l: i for i, l in enumerate(NER_LABELS)})
    with torch.no_grad():  # every token is I-LOC: aggregation decides how tokens group
        model.classifier.bias.zero_()
        model.classifier.bias[NER_LABELS.index("I-LOC")] = 50.0
    return lm(model, tok)


def test_ner_offsets_and_aggregation(ner_model):
    text = "Optimus Prime visited Megatron in Detroit."
    simple = P.ner(ner_model, [text], aggregation="simple")["results"][0]["entities"]
    none = P.ner(ner_model, [text], aggregation="none")["results"][0]["entities"]
    first = P.ner(ner_model, [text], aggregation="first")["results"][0]["entities"]
    # "none": one row per sub-word token, tagged I-LOC, offsets on the token's characters
    n_tokens = len(ner_model.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert len(none) == n_tokens and {e["entity_group"] for e in none} == {"I-LOC"}
    for e in none:
        assert text[e["start"]:e["end"]].lower() == e["word"].replace("##", "").lower()
    # "simple": consecutive I-LOC tokens merge into one entity spanning the text
    assert len(simple) == 1 and simple[0]["entity_group"] == "LOC"
    assert (simple[0]["start"], simple[0]["end"]) == (0, len(text))
    assert 0 < simple[0]["score"] <= 1
    # "first": word-level; still one LOC span
    assert [e["entity_group"] for e in first] == ["LOC"]


def test_ner_long_text_uses_stride_windows(ner_model):
    text = " ".join(["Megatron"] * 400) + " Detroit"  # > 512 tokens
    bias = ner_model.model.classifier.bias
    with torch.no_grad():  # every token B-LOC: each token is its own entity
        bias.zero_()
        bias[NER_LABELS.index("B-LOC")] = 50.0
    try:
        r = P.ner(ner_model, [text], aggregation="simple")
    finally:
        with torch.no_grad():
            bias.zero_()
            bias[NER_LABELS.index("I-LOC")] = 50.0
    assert any("windows" in n for n in r["notices"])
    ents = r["results"][0]["entities"]
    n_tokens = len(ner_model.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert len(ents) == n_tokens  # windows overlap, yet each token is reported once
    assert ents[-1]["word"] == "Detroit" and ents[-1]["end"] == len(text)  # the end was read too, as written
    starts = [e["start"] for e in ents]
    assert starts == sorted(set(starts))
    for e in ents:
        assert text[e["start"]:e["end"]].lower() == e["word"].replace("##", "").lower()
    trunc = P.ner(ner_model, [text], aggregation="none")
    assert any("reads at most 512" in n for n in trunc["notices"])
    assert max(e["end"] for e in trunc["results"][0]["entities"]) < len(text)


# --------------------------------------------------------------------------------- QA

def test_best_spans_on_known_logits():
    start = [0, 5, 1, 0, 9]
    end = [0, 0, 6, 1, 9]
    mask = [False, True, True, True, False]  # tokens 0 and 4 are not context
    spans = best_spans(start, end, mask, top_n=3, max_answer_tokens=5)
    assert spans[0][:2] == (1, 2)  # best start 1, best end 2; masked 4 is never chosen
    assert all(mask[s] and mask[e] and e >= s for s, e, _ in spans)
    assert [sc for *_, sc in spans] == sorted([sc for *_, sc in spans], reverse=True)
    assert best_spans(start, end, mask, max_answer_tokens=1)[0][:2] in {(1, 1), (2, 2)}
    assert best_spans(start, end, [False] * 5) == []


@pytest.fixture(scope="module")
def qa_model():
    tok = minilm_tokenizer()
    return lm(DistilBertForQuestionAnswering(DistilBertConfig(**distil_kwargs(tok))), tok)


def test_qa_spans_are_context_characters(qa_model):
    r = P.qa(qa_model, "What did Bumblebee order?", LETTER, top_n=4)
    assert r["windows"] == 1 and len(r["answers"]) == 4
    for a in r["answers"]:
        assert LETTER[a["start"]:a["end"]] == a["answer"] and a["answer"]
        assert 0 < a["score"] <= 1
    assert r["answer"] == r["answers"][0]["answer"]
    assert [a["score"] for a in r["answers"]] == sorted([a["score"] for a in r["answers"]], reverse=True)


class Pointer(torch.nn.Module):
    """A fake QA head that points at fixed token ids: start at `start_id`, end at `end_id`."""

    def __init__(self, start_id, end_id):
        super().__init__()
        self.config = SimpleNamespace(max_position_embeddings=512, architectures=None)
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.start_id, self.end_id = start_id, end_id

    def forward(self, input_ids, attention_mask=None):
        start = (input_ids == self.start_id).float() * 10
        end = (input_ids == self.end_id).float() * 10
        return SimpleNamespace(start_logits=start, end_logits=end)


def test_qa_stride_finds_answer_past_first_window_and_merges_duplicates():
    tok = minilm_tokenizer()
    pieces = tok.tokenize("Megatron")
    start_id, end_id = tok.convert_tokens_to_ids(pieces[0]), tok.convert_tokens_to_ids(pieces[-1])
    filler = "the parcel arrived late and the box was damaged . " * 80  # ~ 880 tokens
    context = filler + "Bumblebee ordered Megatron yesterday."
    pointer = SimpleNamespace(model=Pointer(start_id, end_id), tokenizer=tok, method="model", checkpoint="ptr")
    r = answer_question(pointer.model, tok, "Who was ordered?", context, top_n=3, max_length=128, stride=32)
    assert r["windows"] > 5
    best = r["answers"][0]
    assert best["answer"] == "Megatron"
    assert context[best["start"]:best["end"]] == "Megatron"
    assert best["start"] == context.index("Megatron")
    assert best["window"] == r["windows"] - 1
    # an answer inside the overlap of two windows is reported once
    context2 = "Megatron " + "the parcel arrived late . " * 8 + "Megatron arrived."
    r2 = answer_question(pointer.model, tok, "Who?", context2, top_n=5, max_length=48, stride=20)
    assert r2["windows"] > 1
    spans = [(a["start"], a["end"]) for a in r2["answers"]]
    assert len(spans) == len(set(spans))
    assert {(0, 8), (context2.rindex("Megatron"), context2.rindex("Megatron") + 8)} <= set(spans)


def test_qa_bad_input(qa_model):
    with pytest.raises(InputError, match="question is empty"):
        P.qa(qa_model, "  ", LETTER)
    with pytest.raises(InputError, match="context is empty"):
        P.qa(qa_model, "Who?", "")
    for bad in (0, 21, float("nan"), "three"):
        with pytest.raises(InputError, match="top_n must be"):
            P.qa(qa_model, "Who?", LETTER, top_n=bad)
    assert len(P.qa(qa_model, "Who?", LETTER, top_n="2")["answers"]) == 2  # JSON may carry strings


# --------------------------------------------------------------------------- fill-mask

def test_fill_mask_top_k_and_errors():
    tok = minilm_tokenizer()
    model = bert_head(BertForMaskedLM)
    paris = tok.convert_tokens_to_ids("paris")
    with torch.no_grad():
        model.cls.predictions.bias[paris] = 100.0  # the head now prefers "paris" everywhere
    m = lm(model, tok)
    r = P.fill_mask(m, "The capital of France is [MASK].", top_k=5)
    assert len(r["candidates"]) == 5
    assert r["candidates"][0]["token_str"] == "paris" and r["candidates"][0]["score"] > 0.99
    assert r["candidates"][0]["sequence"] == "The capital of France is paris."
    scores = [c["score"] for c in r["candidates"]]
    assert scores == sorted(scores, reverse=True) and sum(scores) <= 1 + 1e-6
    assert_fill_mask_refuses(m, second_mask="[MASK]", too_long=("word " * 600, "beyond"), bad_k=float("inf"))


def assert_fill_mask_refuses(m, second_mask: str, too_long: tuple[str, str], bad_k: float) -> None:
    """The input errors every fill-mask method gives: no mask, two masks, a mask past the
    model's reach, top_k out of range."""
    with pytest.raises(InputError, match="no \\[MASK\\]"):
        P.fill_mask(m, "No mask here.")
    with pytest.raises(InputError, match="2 \\[MASK\\]"):
        P.fill_mask(m, f"[MASK] and {second_mask}.")
    with pytest.raises(InputError, match=too_long[1]):
        P.fill_mask(m, too_long[0] + "[MASK]")
    for bad in (0, 51, bad_k):
        with pytest.raises(InputError, match="top_k must be"):
            P.fill_mask(m, "The capital of France is [MASK].", top_k=bad)


# ---------------------------------------------------------------------------- seq2seq

def seq2seq_ids(tok):
    eos = tok.eos_token_id
    bos = tok.bos_token_id if tok.bos_token_id is not None else eos
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos
    return dict(vocab_size=len(tok), pad_token_id=pad, bos_token_id=bos, eos_token_id=eos,
                decoder_start_token_id=bos, forced_eos_token_id=None)


@pytest.fixture(scope="module")
def bart():
    tok = smollm2_tokenizer()
    torch.manual_seed(0)
    cfg = BartConfig(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                     max_position_embeddings=64,
                     task_specific_params={"summarization": {"num_beams": 2, "no_repeat_ngram_size": 3}},
                     **seq2seq_ids(tok))
    return lm(BartForConditionalGeneration(cfg), tok)


def test_summarize_lengths_defaults_and_rouge(bart):
    r = P.summarize(bart, LETTER, settings={"max_new_tokens": 12, "min_new_tokens": 5},
                    reference="Bumblebee got Optimus Prime instead of Megatron.")
    assert r["method"] == "model" and isinstance(r["summary"], str)
    assert r["settings"]["num_beams"] == 2 and r["settings"]["no_repeat_ngram_size"] == 3  # checkpoint defaults
    assert r["settings"]["max_new_tokens"] == 12
    assert r["output_tokens"] <= 12
    assert set(r["rouge"]) == {"rouge1", "rouge2", "rougeL"}
    again = P.summarize(bart, LETTER, settings={"max_new_tokens": 12, "min_new_tokens": 5})
    assert again["summary"] == r["summary"]  # greedy/beam is deterministic
    beams1 = P.summarize(bart, LETTER, settings={"max_new_tokens": 8, "num_beams": 1})
    assert beams1["settings"]["num_beams"] == 1
    long = P.summarize(bart, LETTER * 3, settings={"max_new_tokens": 4})
    assert any("reads at most 64" in n for n in long["notices"]) and long["input_tokens"] == 64
    with pytest.raises(InputError, match="minimum length"):
        P.summarize(bart, LETTER, settings={"max_new_tokens": 4, "min_new_tokens": 9})
    with pytest.raises(InputError, match="empty"):
        P.summarize(bart, "   ")


@pytest.mark.parametrize("settings,message", [
    ({"max_new_tokens": 0}, "max_new_tokens must be between 1 and 512"),
    ({"max_new_tokens": float("nan")}, "max_new_tokens must be"),
    ({"max_new_tokens": 8, "min_new_tokens": -1}, "min_new_tokens must be between 0"),
    ({"max_new_tokens": 8, "num_beams": 9}, "num_beams must be between 0 and 8"),
    ({"max_new_tokens": 8, "num_beams": "two"}, "num_beams must be"),
])
def test_summarize_settings_out_of_range(bart, settings, message):
    with pytest.raises(InputError, match=message):
        P.summarize(bart, LETTER, settings=settings)


def test_summarize_zero_beams_keeps_the_checkpoint_default(bart):
    r = P.summarize(bart, LETTER, settings={"max_new_tokens": 6, "num_beams": 0, "min_new_tokens": 0})
    assert r["settings"]["num_beams"] == 2


def test_translate_with_marian_language_pair_and_bleu():
    tok = smollm2_tokenizer()
    torch.manual_seed(0)
    cfg = MarianConfig(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                       decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                       max_position_embeddings=128, **seq2seq_ids(tok))
    marian = lm(MarianMTModel(cfg), tok, checkpoint="Helsinki-NLP/opus-mt-en-de")
    reference = "Ich habe eine Megatron-Figur bestellt."
    r = P.translate(marian, "I ordered a Megatron figure.", settings={"max_new_tokens": 6}, reference=reference)
    assert (r["source_lang"], r["target_lang"]) == ("en", "de") and r["language_pair"] == "English -> German"
    assert r["output_tokens"] == 6  # random weights never pick EOS this early
    # Random tokens share no n-gram with the reference: BLEU 0, and the 3-word output against
    # the 6-token reference ("Ich habe eine Megatron-Figur bestellt .") has brevity penalty exp(1 - 6/3).
    assert len(r["translation"].split()) == 3
    assert r["bleu"]["precisions"] == [0.0] * 4 and r["bleu"]["bleu"] == 0.0
    assert r["bleu"]["brevity_penalty"] == pytest.approx(math.exp(1 - 6 / 3))
    assert r["bleu"]["bleu"] == sacrebleu.sentence_bleu(r["translation"], [reference]).score
    # The reference is scored against this translation: itself as the reference gives 100.
    same = P.translate(marian, "I ordered a Megatron figure.", settings={"max_new_tokens": 6},
                       reference=r["translation"])
    assert same["translation"] == r["translation"] and same["bleu"]["bleu"] == pytest.approx(100.0)
    other = P.translate(marian, "Hello.", source="en", target="fr", settings={"max_new_tokens": 3})
    assert other["target_lang"] == "de" and any("en -> de" in n for n in other["notices"])


# ------------------------------------------------------------------ instruct fallback

@pytest.fixture(scope="module")
def instruct():
    """The instruct fallback on a tiny random Llama with a 1024-token window."""
    model = tiny_llama(max_position_embeddings=1024, pad_token_id=smollm2_tokenizer().pad_token_id)
    return lm(model, smollm2_tokenizer(), method="instruct-fallback", checkpoint="tiny-llama")


def test_instruct_fallback_shapes(instruct):
    ner = P.ner(instruct, [LETTER], max_new_tokens=12)
    res = ner["results"][0]
    assert ner["method"] == "instruct-fallback" and res["raw_output"]
    # The random model's reply names nothing: nothing is grounded, nothing is invented.
    assert ins.parse_ner_output(res["raw_output"]) == [] and res["entities"] == [] and res["dropped"] == []
    # QA is never a free reply any more: the decoder may only copy spans (span decoding, test_span_qa.py).
    with pytest.raises(InputError, match="cannot be served by method 'instruct-fallback'"):
        P.qa(instruct, "What did Bumblebee order?", LETTER)
    s = P.summarize(instruct, LETTER, settings={"max_new_tokens": 6}, reference="Wrong toy.")
    assert s["output_tokens"] == 6 and s["rouge"]["rouge1"]["f1"] == 0.0
    t = P.translate(instruct, "Hello.", "en", "fr", settings={"max_new_tokens": 6})
    assert t["language_pair"] == "English -> French"
    with pytest.raises(InputError, match="same"):
        P.translate(instruct, "Hello.", "en", "en")
    with pytest.raises(InputError, match="window"):  # 1024-token model, ~2000-token prompt
        P.summarize(instruct, "word " * 2000, settings={"max_new_tokens": 6})


def _replying(monkeypatch, text: str, probability: float = 0.5):
    """Make the instruct model reply `text` (with mean token probability `probability`)."""
    reply = {"text": text, "prompt_tokens": 10, "new_tokens": 3, "mean_logprob": math.log(probability)}
    monkeypatch.setattr(P.ins, "chat_generate", lambda *args, **kwargs: dict(reply))


def test_ner_fallback_grounds_the_reply(instruct, monkeypatch):
    _replying(monkeypatch, "PER: Bumblebee\nORG: Amazon\nLOC: Mars\nMISC: Optimus Prime")
    res = P.ner(instruct, [LETTER])["results"][0]
    assert [(e["entity_group"], e["word"]) for e in res["entities"]] == [
        ("ORG", "Amazon"), ("MISC", "Optimus Prime"), ("PER", "Bumblebee")]
    for e in res["entities"]:
        assert LETTER[e["start"]:e["end"]] == e["word"] and e["score"] is None
    assert res["dropped"] == [{"entity_group": "LOC", "word": "Mars", "reason": "not found in the text"}]


def test_generate_text(instruct):
    gen_lm = SimpleNamespace(**{**vars(instruct), "method": "model"})
    r = P.generate_text(gen_lm, "Dear Amazon,", settings={"max_new_tokens": 5})
    assert r["generated_text"].startswith("Dear Amazon,") and r["completion"] in r["generated_text"]
    r2 = P.generate_text(gen_lm, "Dear Amazon,", settings={"max_new_tokens": 5})
    assert r2["generated_text"] == r["generated_text"]  # greedy by default
    with pytest.raises(InputError):
        P.generate_text(gen_lm, "", settings={})


# ------------------------------------------------------------- fill-mask by the decoder

class _Bigram(torch.nn.Module):
    """A causal LM whose next-token logits depend only on the previous token: `rules[prev]`
    adds to a flat base. Exact log-probs, so the rerank can be checked by hand."""

    def __init__(self, vocab: int, rules: dict[int, dict[int, float]]):
        super().__init__()
        self.vocab, self.rules = vocab, rules
        self.config = SimpleNamespace(max_position_embeddings=64)
        self.forwards = 0

    def forward(self, input_ids, logits_to_keep=0):
        self.forwards += 1
        logits = torch.zeros(*input_ids.shape, self.vocab)
        for b, row in enumerate(input_ids.tolist()):
            for t, prev in enumerate(row):
                for nxt, add in self.rules.get(prev, {}).items():
                    logits[b, t, nxt] += add
        if logits_to_keep:
            logits = logits[:, -logits_to_keep:]
        return SimpleNamespace(logits=logits)


def _ids(tok, *words):
    return [tok(w, add_special_tokens=False)["input_ids"][0] for w in words]


@pytest.fixture(scope="module")
def bigram():
    """After "the": " best" likeliest, " capital" second; but " of" follows " capital" only."""
    tok = smollm2_tokenizer()
    the, best, capital, of = _ids(tok, " the", " best", " capital", " of")
    rules = {the: {best: 8.0, capital: 7.0}, capital: {of: 9.0}, best: {of: -5.0}}
    return tok, _Bigram(len(tok), rules), {"best": best, "capital": capital}


def test_decoder_fill_mask_reranks_by_the_right_context(bigram):
    tok, model, ids = bigram
    m = lm(model, tok, method="decoder-fill-mask")
    r = P.fill_mask(m, "Paris is the [MASK] of France.", top_k=3)
    first, second = r["candidates"][:2]
    assert r["method"] == "decoder-fill-mask" and r["n_reranked"] == 20 and "decoder fill-mask" in r["method_label"]
    assert (first["token_str"], first["left_rank"]) == ("capital", 2)  # the right context moved it up
    assert (second["token_str"], second["left_rank"]) == ("best", 1)
    assert first["sequence"] == "Paris is the capital of France."
    # Both scores by hand: flat base of V logits, + the rule's bonus.
    v = len(tok)
    lse_the = math.log(v - 2 + math.exp(8) + math.exp(7))
    assert first["left_logprob"] == pytest.approx(7 - lse_the, abs=1e-4)
    assert second["left_logprob"] == pytest.approx(8 - lse_the, abs=1e-4)
    gap = (9 - math.log(v - 1 + math.exp(9))) - (-5 - math.log(v - 1 + math.exp(-5)))  # " of" after each
    assert first["sentence_logprob"] - second["sentence_logprob"] == pytest.approx(gap - 1, abs=1e-3)
    assert first["score"] > 0.99 and sum(c["score"] for c in r["candidates"]) <= 1 + 1e-6
    sentence = [c["sentence_logprob"] for c in r["candidates"]]
    assert sentence == sorted(sentence, reverse=True)
    assert model.forwards == 2  # the left context once, all 20 candidates in one batched forward
    assert any("20 likeliest whole words" in n for n in r["notices"])


def test_decoder_fill_mask_sentence_score_is_the_plain_sum(bigram):
    """sentence_logprob == the sum of the sentence's token log-probs, scored one candidate at a time."""
    tok, model, _ = bigram
    m = lm(model, tok, method="decoder-fill-mask")
    r = P.fill_mask(m, "Paris is the <mask> of France.", top_k=4)
    assert r["candidates"][0]["token_str"] == "capital"  # <mask> works as [MASK] does
    for c in r["candidates"]:
        ids = [0] + tok(c["sequence"], add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = model(torch.tensor([ids])).logits[0, :-1].log_softmax(-1)
        total = float(logp.gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).sum())
        assert c["sentence_logprob"] == pytest.approx(total, abs=1e-3)


def test_decoder_fill_mask_candidates_are_whole_words_and_chunks_agree(monkeypatch):
    from backend.pipelines import decoder_mask as dm

    tok = smollm2_tokenizer()
    spaced, bare, texts = dm._word_tokens(tok)
    assert spaced[_ids(tok, " capital")[0]] and bare[tok.convert_tokens_to_ids("Paris")]
    assert not spaced[tok.eos_token_id] and not bare[tok.eos_token_id] and not spaced[_ids(tok, " ,")[0]]
    m = lm(tiny_llama(), tok, method="decoder-fill-mask")
    r = P.fill_mask(m, "I ordered a Megatron action [MASK] from your store.", top_k=20)
    assert len(r["candidates"]) == 20 and sum(c["score"] for c in r["candidates"]) == pytest.approx(1, abs=1e-5)
    assert all(texts[c["token"]].startswith(" ") and c["token_str"].isalnum() for c in r["candidates"])
    assert sorted(c["left_rank"] for c in r["candidates"]) == list(range(1, 21))
    start = P.fill_mask(m, "[MASK] is the capital of France.", top_k=5)  # no space before: bare words
    assert all(not texts[c["token"]].startswith(" ") for c in start["candidates"])
    monkeypatch.setattr(dm, "MAX_LOGITS", 1)  # one candidate per forward
    chunked = P.fill_mask(m, "I ordered a Megatron action [MASK] from your store.", top_k=20)
    assert [c["token"] for c in chunked["candidates"]] == [c["token"] for c in r["candidates"]]
    for a, b in zip(chunked["candidates"], r["candidates"]):
        assert a["sentence_logprob"] == pytest.approx(b["sentence_logprob"], abs=1e-4)


def test_decoder_fill_mask_errors_and_budget():
    from backend.runtime import budget
    from backend.runtime.budget import BudgetExceeded, Cancelled

    tok = smollm2_tokenizer()
    m = lm(tiny_llama(max_position_embeddings=64), tok, method="decoder-fill-mask")
    assert_fill_mask_refuses(m, second_mask="<mask>", too_long=("word " * 100, "at most 64"), bad_k=float("nan"))
    with budget.scope(seconds=1e-9):
        with pytest.raises(BudgetExceeded, match="time budget"):
            P.fill_mask(m, "The capital of France is [MASK].")
    with budget.scope(seconds=60) as b:
        b.cancel()
        with pytest.raises(Cancelled):
            P.fill_mask(m, "The capital of France is [MASK].")


def test_masked_lm_accepts_the_angle_bracket_mask():
    tok = minilm_tokenizer()
    m = lm(bert_head(BertForMaskedLM), tok)
    a = P.fill_mask(m, "The capital of France is <mask>.", top_k=3)
    b = P.fill_mask(m, "The capital of France is [MASK].", top_k=3)
    assert [c["token"] for c in a["candidates"]] == [c["token"] for c in b["candidates"]]
    assert a["scoring"].startswith("softmax of the masked LM")


@pytest.mark.parametrize("reason,words", [("time budget", "stopped at the time budget"), ("stopped", "stopped by you")])
def test_instruct_fallback_says_when_it_was_cut_short(instruct, monkeypatch, reason, words):
    reply = {"text": "PER: Bumblebee", "prompt_tokens": 10, "new_tokens": 3, "mean_logprob": -1.0,
             "finish_reason": reason}
    calls = []
    monkeypatch.setattr(P.ins, "chat_generate", lambda *a, **k: calls.append(1) or dict(reply))
    ner = P.ner(instruct, [LETTER, LETTER, LETTER])
    assert len(calls) == 1 and len(ner["results"]) == 1 and ner["finish_reason"] == reason
    assert ner["notices"][:2] == [f"The reply for text 1 of 3 was {words}: it is incomplete.",
                                  "Texts 2-3 were not read."]
    for r, what in ((P.summarize(instruct, LETTER), "The summary"),
                    (P.translate(instruct, "Hello.", "en", "de"), "The translation")):
        assert r["finish_reason"] == reason and r["notices"][0] == f"{what} was {words}: it is incomplete."
    reply["finish_reason"] = "eos"
    done = P.summarize(instruct, LETTER)
    assert done["finish_reason"] == "eos" and not any("incomplete" in n for n in done["notices"])


def test_generate_text_streams_then_gives_the_same_result(instruct):
    gen_lm = SimpleNamespace(**{**vars(instruct), "method": "model"})
    steps = list(P.generate_text_stream(gen_lm, "Dear Amazon,", settings={"max_new_tokens": 5}))
    *partial, (text, n, result) = steps
    assert [k for _, k, r in partial] == [1, 2, 3, 4, 5] and all(r is None for _, _, r in partial)
    assert all(b[0].startswith(a[0]) for a, b in zip(partial, partial[1:]))  # the text only grows
    plain = P.generate_text(gen_lm, "Dear Amazon,", settings={"max_new_tokens": 5})
    assert text == plain["completion"] and n == 5
    keys = ("task", "method", "prompt", "generated_text", "completion", "model")
    assert {k: result[k] for k in keys} == {k: plain[k] for k in keys}
    assert result["decoding"]["n_new_tokens"] == plain["decoding"]["n_new_tokens"]
    stream = P.generate_text_stream(gen_lm, "Dear Amazon,", settings={"max_new_tokens": 200})
    assert next(stream)[1] == 1
    stream.close()  # Stop: generation ends (decode_stream joins its worker), no error
