"""Model-level task runners: the book's chapter 1 tasks and what happens underneath.

`api` (the entry points the tab calls) loads the role's model and calls these; unit tests
call them directly with tiny models.

Each runner takes a loaded model (`backend.hub.LoadedModel`, or anything with `.model`,
`.tokenizer`, `.method`, `.checkpoint`; for the instruct fallbacks also the generation server's
stand-in, `backend.hub.server_models.ServerModel`) plus plain inputs, dispatches on *how* the model
serves the task, and returns one JSON-able dict:

    {"task", "model": <provenance>, "method", "seconds", "notices": [...], ...task fields}

methods: "model" (a checkpoint fine-tuned for the task), "embedding-similarity" (sentiment
and zero-shot by cosine to label descriptions), "instruct-fallback" (the instruct decoder
prompted for the task, its reply parsed into the same shape), "span-decoding" (QA: the instruct
decoder's reply may only be a span of the context; backend.engines.qa.span_qa).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from backend.runtime import config
from backend.runtime.errors import InputError
from backend.pipelines import decoder_mask as dec_mask
from backend.pipelines import encoders as enc
from backend.engines.tasks import instruct as ins
from backend.engines.classify import similarity as sim
from backend.engines.qa import span_qa
from backend.pipelines.metrics import BASELINE_SENTENCES, bleu, lead_baseline, rouge
from backend.engines.qa.extractive_qa import answer_question
from backend.pipelines.qa_reader import reader_answer, windows_notice
from backend.pipelines.seq2seq import LANGUAGE_NAMES, language_pair, seq2seq_generate
from backend.engines.tasks.text import check_batch
from backend.hub.server_models import reply as instruct_reply
from backend.runtime.validation import as_int, check_template, check_text

METHOD_MODEL = config.METHOD_MODEL
METHOD_EMBEDDING = config.METHOD_EMBEDDING
METHOD_INSTRUCT = config.METHOD_INSTRUCT
METHOD_SPAN = config.METHOD_SPAN
METHOD_FINETUNED = config.METHOD_FINETUNED

# Ranges of the numbers a caller sets (the tab's sliders stay inside them).
MAX_TOP_N = 20  # QA answer spans
MAX_NEW_TOKENS = 512  # summarisation / translation
MAX_BEAMS = 8  # summarisation / translation; 0 = the checkpoint's default

# What a dedicated checkpoint's `config.architectures` must end with, per task.
_HEADS = {
    "sentiment": ("ForSequenceClassification",),
    "zero_shot": ("ForSequenceClassification",),
    "ner": ("ForTokenClassification",),
    "qa": ("ForQuestionAnswering",),
    "summarization": ("ForConditionalGeneration", "MTModel", "Seq2SeqLM"),
    "translation": ("ForConditionalGeneration", "MTModel", "Seq2SeqLM"),
    "fill_mask": ("ForMaskedLM", "ForPreTraining"),
    "text_generation": ("ForCausalLM", "LMHeadModel"),
}
_TASK_WORDS = {
    "sentiment": "text classification", "zero_shot": "zero-shot classification (NLI)",
    "ner": "named entity recognition", "qa": "extractive question answering",
    "summarization": "summarization", "translation": "translation", "fill_mask": "fill-mask",
    "text_generation": "text generation",
}


def describe(lm) -> dict:
    if hasattr(lm, "describe"):
        return lm.describe()
    return {"checkpoint": getattr(lm, "checkpoint", "?"), "source": getattr(lm, "source", "?"),
            "method": getattr(lm, "method", METHOD_MODEL)}


def check_head(lm, role: str) -> None:
    """Refuse a dedicated checkpoint trained for another task (its head would be random)."""
    if getattr(lm, "method", METHOD_MODEL) != METHOD_MODEL:
        return
    archs = list(getattr(lm.model.config, "architectures", None) or [])
    if archs and not any(a.endswith(suffix) for a in archs for suffix in _HEADS[role]):
        example = config.BOOK[role].checkpoint
        raise InputError(
            f"'{getattr(lm, 'checkpoint', '?')}' is a {archs[0]}, not a model for {_TASK_WORDS[role]}: "
            f"its task head would be untrained. Use a checkpoint fine-tuned for it, e.g. '{example}'."
        )


def _method(lm, role: str, allowed: tuple[str, ...]) -> str:
    method = getattr(lm, "method", METHOD_MODEL)
    if method not in allowed:
        raise InputError(f"The {_TASK_WORDS[role]} task cannot be served by method '{method}'.")
    check_head(lm, role)
    return method


@contextmanager
def _envelope(task: str, lm, method: str):
    result = {"task": task, "model": describe(lm), "method": method, "notices": []}
    start = time.perf_counter()
    yield result
    result["seconds"] = round(time.perf_counter() - start, 4)


_EARLY = {"time budget": "stopped at the time budget", "stopped": "stopped by you", "memory budget": "stopped at the memory guard (TLAB_REQUEST_MEMORY_MB)"}


def _finish(r: dict, gen: dict, what: str = "The reply") -> bool:
    """Record why the instruct model stopped; say so when it was cut short. True if it was."""
    r["finish_reason"] = gen.get("finish_reason")
    if r["finish_reason"] in _EARLY:
        r["notices"].insert(0, f"{what} was {_EARLY[r['finish_reason']]}: it is incomplete.")
        return True
    return False


# ------------------------------------------------------------------------ classification

def classify(lm, texts, label_descriptions: dict[str, str] | None = None,
             temperature: float = sim.DEFAULT_TEMPERATURE) -> dict:
    """Sentiment / text classification for one or more texts."""
    texts = check_batch(texts)
    method = _method(lm, "sentiment", (METHOD_MODEL, METHOD_EMBEDDING))
    with _envelope("classify", lm, method) as r:
        if method == METHOD_EMBEDDING:
            desc = label_descriptions or dict(sim.SENTIMENT_DESCRIPTIONS)
            if len(desc) > sim.MAX_LABELS:
                raise InputError(f"{len(desc)} labels given; at most {sim.MAX_LABELS} are allowed.")
            r["results"] = sim.classify_by_similarity(lm.model, lm.tokenizer, texts, desc,
                                                      temperature=temperature)
            r["notices"] += sim.truncation_notices(lm.tokenizer, texts)
            r["label_descriptions"] = desc
            r["scoring"] = f"softmax(cosine / {temperature}) over the label descriptions"
        else:
            if label_descriptions:
                r["notices"].append("Label descriptions are ignored: this checkpoint has its own trained labels.")
            r["results"], notes = enc.classify_sequences(lm.model, lm.tokenizer, texts)
            r["notices"] += notes
            r["scoring"] = "softmax over the classifier's logits"
    return r


def zero_shot(lm, texts, labels, multi_label: bool = False, template: str = sim.DEFAULT_TEMPLATE,
              descriptions: dict[str, str] | None = None) -> dict:
    """Zero-shot classification into candidate labels (NLI model, or embedding similarity)."""
    texts = check_batch(texts)
    labels = sim.parse_labels(labels)
    template = check_template("template", template, sim.DEFAULT_TEMPLATE)
    method = _method(lm, "zero_shot", (METHOD_MODEL, METHOD_EMBEDDING))
    with _envelope("zero_shot", lm, method) as r:
        r["multi_label"] = bool(multi_label)
        if method == METHOD_EMBEDDING:
            desc = {lab: (descriptions or {}).get(lab) or template.replace("{}", lab) for lab in labels}
            r["results"] = sim.classify_by_similarity(lm.model, lm.tokenizer, texts, desc, multi_label=multi_label)
            r["notices"] += sim.truncation_notices(lm.tokenizer, texts)
            r["label_descriptions"] = desc
            r["scoring"] = (
                f"independent per label: sigmoid((cosine - {sim.DEFAULT_THRESHOLD}) / {sim.DEFAULT_TEMPERATURE})"
                if multi_label else f"softmax(cosine / {sim.DEFAULT_TEMPERATURE}) across the labels"
            )
        else:
            label2id = {k.lower(): v for k, v in (getattr(lm.model.config, "label2id", None) or {}).items()}
            if not any(k.startswith("entail") for k in label2id):
                raise InputError(
                    f"'{getattr(lm, 'checkpoint', '?')}' has no 'entailment' label: zero-shot needs an NLI "
                    f"model, e.g. '{config.BOOK['zero_shot'].checkpoint}'."
                )
            r["results"] = enc.zero_shot_with_pipeline(lm.model, lm.tokenizer, texts, labels, multi_label, template)
            r["scoring"] = ("entailment vs contradiction per label" if multi_label
                            else "softmax of the entailment logits across labels")
    return r


# ------------------------------------------------------------------------------------ NER

def ner(lm, texts, aggregation: str = "simple", max_new_tokens: int = 96) -> dict:
    """Named entities with character offsets, per text."""
    texts = check_batch(texts)
    method = _method(lm, "ner", (METHOD_MODEL, config.METHOD_FINETUNED, METHOD_INSTRUCT))
    with _envelope("ner", lm, method) as r:
        r["aggregation"] = aggregation if method != METHOD_INSTRUCT else "instruct-fallback"
        if method != METHOD_INSTRUCT:  # a token classifier: a checkpoint, or the one fine-tuned here
            entities, notes = enc.ner_with_pipeline(lm.model, lm.tokenizer, texts, aggregation)
            r["notices"] += notes
            r["scoring"] = ("an entity's score is the mean softmax probability of its words' tags"
                            if aggregation != "none" else "each token's softmax probability of its tag")
            r["results"] = [{"text": t, "entities": e} for t, e in zip(texts, entities)]
        else:
            results = []
            for i, text in enumerate(texts):
                gen = instruct_reply(lm, ins.ner_messages(text), max_new_tokens)
                pairs = ins.parse_ner_output(gen["text"])
                entities, dropped = ins.ground_entities(text, pairs)
                results.append({"text": text, "entities": entities, "raw_output": gen["text"],
                                "dropped": dropped, "finish_reason": gen.get("finish_reason")})
                what = "The reply" if len(texts) == 1 else f"The reply for text {i + 1} of {len(texts)}"
                if _finish(r, gen, what):
                    if i + 1 < len(texts):
                        r["notices"].insert(1, f"Texts {i + 2}-{len(texts)} were not read.")
                    break
            r["results"] = results
            r["notices"].append("Instruct-model fallback: entities are what the small chat model listed, "
                                "kept only where they occur in the text; no per-entity scores.")
    return r


# ------------------------------------------------------------------------------------- QA

def qa(lm, question: str, context: str, top_n: int = 3, stride: int = 128,
       max_answer_tokens: int = 30, rank=None) -> dict:
    """Extractive QA: the answer span in the context, with top-n alternatives.

    A QA checkpoint scores start/end logits; the instruct decoder (METHOD_SPAN) may only copy
    spans of the context and may say the text has no answer (`no_answer`). `rank` (question,
    sentences -> scores) lets it read only the best sentences (backend.engines.qa.span_qa)."""
    question, context = check_text(question, "question"), check_text(context, "context")
    top_n = as_int("top_n", top_n, lo=1, hi=MAX_TOP_N)
    method = _method(lm, "qa", (METHOD_MODEL, METHOD_SPAN, METHOD_FINETUNED))
    with _envelope("qa", lm, method) as r:
        r["question"], r["context"] = question, context
        if method == METHOD_MODEL:
            out = answer_question(lm.model, lm.tokenizer, question, context, top_n=top_n,
                                  stride=int(stride), max_answer_tokens=int(max_answer_tokens))
            r.update(out, no_answer=False)
            windows_notice(r, out)
            answers, why = out["answers"], "the context has no more distinct spans within the answer-length limit"
        elif method == METHOD_FINETUNED:
            answers, why = reader_answer(r, lm, question, context, top_n, int(stride), int(max_answer_tokens))
        else:
            out = span_qa.answer_spans(lm.model, lm.tokenizer, question, context, top_n=top_n, rank=rank,
                                       max_answer_tokens=min(int(max_answer_tokens), span_qa.MAX_ANSWER_TOKENS))
            answers, why = out.pop("answers"), out.pop("why_fewer")
            for a in answers:
                a["window"] = 0
            r.update(out, answers=answers, windows=1, scoring=span_qa.SCORING,
                     no_answer_reply=span_qa.NO_ANSWER_REPLY)
            if out["sentences_read"] < out["sentences"]:
                r["notices"].append(f"The decoder read the {out['sentences_read']} of {out['sentences']} sentences "
                                    "closest to the question (embedding cosine).")
            if r["no_answer_reason"] == "absent terms":
                r["notices"].append("No answer in this text: it never mentions "
                                    f"{', '.join(repr(w) for w in r['absent_terms'])}, in any form, and the question "
                                    "is about that. The spans listed are what the model would have copied "
                                    "(often the right kind of answer about something else).")
            elif r["no_answer"]:
                r["notices"].append(f"No answer in this text: the model rates the reply '{span_qa.NO_ANSWER_REPLY}' "
                                    "about as likely as answering at all, or more.")
        for a in answers:
            a["match"] = "exact"
        r["top_n"] = {"asked": top_n, "given": len(answers)}
        if len(answers) < top_n:
            r["notices"].append(f"Asked for {top_n} answer spans; {len(answers)} given: {why}.")
        best = answers[0] if answers and not r["no_answer"] else {"answer": "", "score": None, "start": None,
                                                                   "end": None}
        r.update({"answer": best["answer"], "score": best["score"], "start": best["start"], "end": best["end"]})
    return r


# ------------------------------------------------------------------------------ seq2seq

def _instruct_settings(settings: dict | None, default_new: int) -> tuple[int, dict]:
    s = dict(settings or {})
    max_new = int(s.pop("max_new_tokens", default_new) or default_new)
    gen = {k: v for k, v in s.items() if k in ("do_sample", "temperature", "top_k", "top_p",
                                                  "repetition_penalty", "num_beams", "min_new_tokens")}
    if not gen.get("do_sample"):
        for k in ("temperature", "top_k", "top_p"):
            gen.pop(k, None)
    if s.get("seed") is not None and gen.get("do_sample"):
        import torch

        torch.manual_seed(int(s["seed"]))
    return max_new, gen


def _check_lengths(settings: dict | None) -> dict:
    """The settings with their lengths and beam count read as whole numbers in range."""
    s = dict(settings or {})
    bounds = {"max_new_tokens": (1, MAX_NEW_TOKENS), "min_new_tokens": (0, MAX_NEW_TOKENS),
              "num_beams": (0, MAX_BEAMS)}
    for name, (lo, hi) in bounds.items():
        if s.get(name) is not None:
            s[name] = as_int(name, s[name], lo=lo, hi=hi)
    max_new, min_new = s.get("max_new_tokens"), s.get("min_new_tokens")
    if min_new is not None and max_new is not None and min_new > max_new:
        raise InputError("The minimum length is larger than the maximum length: lower the minimum.")
    if s.get("num_beams") == 0:
        del s["num_beams"]  # 0: the checkpoint's default
    return s


def summarize(lm, text: str, settings: dict | None = None, reference: str | None = None) -> dict:
    """A summary of `text`; ROUGE-1/2/L against `reference` when one is given."""
    text = check_text(text)
    settings = _check_lengths(settings)
    method = _method(lm, "summarization", (METHOD_MODEL, METHOD_INSTRUCT))
    with _envelope("summarize", lm, method) as r:
        if method == METHOD_MODEL:
            out = seq2seq_generate(lm.model, lm.tokenizer, text, "summarization", settings)
            r["notices"] += out.pop("notices")
            r["summary"] = out.pop("text")
            r.update(out)
        else:
            max_new, gen = _instruct_settings(settings, 80)
            out = instruct_reply(lm, ins.summary_messages(text), max_new, **gen)
            r["notices"] += out.get("warnings") or []
            r["summary"] = ins.parse_free_text(out["text"])
            r.update({"raw_output": out["text"], "input_tokens": out["prompt_tokens"],
                      "output_tokens": out["new_tokens"]})
            r["notices"].append("Instruct-model fallback: a small chat model prompted to summarise.")
            _finish(r, out, "The summary")
        r["baseline"] = lead_baseline(text)
        if r["baseline"]["sentences_in_text"] <= BASELINE_SENTENCES:
            r["notices"].append(f"The text has {r['baseline']['sentences_in_text']} sentence(s): the "
                                "first-three-sentences baseline is the whole text.")
        _score(r, "summary", check_text(reference, "reference"), "ROUGE")
    return r


def _score(r: dict, output: str, reference: str, metric: str) -> None:
    """ROUGE (summaries, and the baseline's) or BLEU against the reference passed with this very
    request, never another: `scored_against` says so, or why nothing was scored."""
    if not reference:
        r["scored_against"] = None
        r["notices"].append(f"No reference given with this text: no {metric}.")
        return
    r["reference"] = reference
    r["scored_against"] = "the reference passed with this request (for this text)"
    if metric == "BLEU":
        r["bleu"] = bleu(r[output], reference)
        return
    r["rouge"] = rouge(r[output], reference)
    if "baseline" in r:
        r["baseline"]["rouge"] = rouge(r["baseline"]["summary"], reference)


def translate(lm, text: str, source: str = "en", target: str = "de", settings: dict | None = None,
              reference: str | None = None) -> dict:
    """A translation of `text`; BLEU against `reference` when one is given."""
    text = check_text(text)
    settings = _check_lengths(settings)
    method = _method(lm, "translation", (METHOD_MODEL, METHOD_INSTRUCT))
    source, target = (source or "en").lower(), (target or "de").lower()
    with _envelope("translate", lm, method) as r:
        if method == METHOD_MODEL:
            src, tgt = language_pair(lm.model, lm.tokenizer, getattr(lm, "checkpoint", ""))
            if tgt and (src, tgt) != (source, target):
                r["notices"].append(f"This checkpoint translates {src or '?'} -> {tgt}; "
                                    f"the requested {source} -> {target} pair was not used.")
            source, target = src or source, tgt or target
            key = f"translation_{source}_to_{target}"
            out = seq2seq_generate(lm.model, lm.tokenizer, text, key, settings)
            r["notices"] += out.pop("notices")
            r["translation"] = out.pop("text")
            r.update(out)
        else:
            if source not in LANGUAGE_NAMES or target not in LANGUAGE_NAMES:
                raise InputError(f"Unknown language code; choose from {', '.join(sorted(LANGUAGE_NAMES))}.")
            if source == target:
                raise InputError("Source and target language are the same: pick another target.")
            max_new, gen = _instruct_settings(settings, 160)
            msgs = ins.translation_messages(text, LANGUAGE_NAMES[source], LANGUAGE_NAMES[target])
            out = instruct_reply(lm, msgs, max_new, **gen)
            r["notices"] += out.get("warnings") or []
            r["translation"] = ins.parse_free_text(out["text"])
            r.update({"raw_output": out["text"], "input_tokens": out["prompt_tokens"],
                      "output_tokens": out["new_tokens"]})
            r["notices"].append("Instruct-model fallback: a 135M chat model is a poor translator; "
                                "the book's model is Helsinki-NLP's Marian en-de.")
            _finish(r, out, "The translation")
        r["source_lang"], r["target_lang"] = source, target
        r["language_pair"] = f"{LANGUAGE_NAMES.get(source, source)} -> {LANGUAGE_NAMES.get(target, target)}"
        _score(r, "translation", check_text(reference, "reference"), "BLEU")
    return r


# ------------------------------------------------------------------------ fill-mask, gen

def fill_mask(lm, text: str, top_k: int = 5) -> dict:
    """Top-k words for the one mask ([MASK] or <mask>) in `text`: a masked LM's, or, offline,
    the decoder's (left-context candidates reranked by whole-sentence likelihood)."""
    text = check_text(text)
    top_k = as_int("top_k", top_k, lo=1, hi=enc.MAX_TOP_K)
    dec_mask.split_mask(text)  # exactly one mask, either spelling
    method = _method(lm, "fill_mask", (METHOD_MODEL, dec_mask.METHOD))
    with _envelope("fill_mask", lm, method) as r:
        r["text"] = text
        if method == dec_mask.METHOD:
            r.update(dec_mask.fill_mask(lm.model, lm.tokenizer, text, top_k))
            r["scoring"] = "reranked by the whole sentence's log-likelihood (softmax over the candidates)"
            r["notices"].append(f"A decoder has no masked-LM head: the {r['n_reranked']} likeliest whole words "
                                "after the left context were each put in place and the whole sentence scored.")
            if r["mask_position"] < 3:
                r["notices"].append("Little text comes before the mask, so the candidates are weak guesses: "
                                    "a decoder proposes words from the left context only.")
        else:
            r.update(enc.fill_mask(lm.model, lm.tokenizer, text.replace("<mask>", enc.MASK_PLACEHOLDER), top_k))
            r["scoring"] = "softmax of the masked LM's logits at the mask"
    return r


def generate_text(lm, prompt: str, settings: dict | None = None) -> dict:
    """Continue `prompt` with the Decoding tab's backend and its settings (`DecodeSettings` keys:
    strategy greedy|sample|beam, max_new_tokens, temperature, top_k, top_p, num_beams, seed, ...)."""
    prompt = check_text(prompt, "prompt")
    method = _method(lm, "text_generation", (METHOD_MODEL,))
    with _envelope("generate_text", lm, method) as r:
        r["prompt"] = prompt
        out = _decode(lm, prompt, settings or {})
        r.update(out)
    return r


def generate_text_stream(lm, prompt: str, settings: dict | None = None):
    """`generate_text`, streamed: (completion so far, new tokens so far, None) per token, then
    (completion, new tokens, the `generate_text` result). Beam search yields only the last.
    Closing the generator stops generation (decode_stream waits for the model to be free)."""
    from contextlib import closing

    from backend.engines.generation import generate as decoding

    prompt = check_text(prompt, "prompt")
    method = _method(lm, "text_generation", (METHOD_MODEL,))
    n = 0
    with _envelope("generate_text", lm, method) as r:
        r["prompt"] = prompt
        with closing(decoding.decode_stream(lm.model, lm.tokenizer, prompt, dict(settings or {}))) as stream:
            for text, res in stream:
                if res is None:
                    n += 1
                    yield text, n, None
                else:
                    r.update(_result(prompt, res))
    yield r["completion"], r["decoding"]["n_new_tokens"], r


def _decode(lm, prompt: str, settings: dict) -> dict:
    """The Decoding tab's backend: same settings (strategy, temperature, top-k/p, beams, seed)."""
    from backend.engines.generation import generate as decoding

    return _result(prompt, decoding.decode(lm.model, lm.tokenizer, prompt, dict(settings)))


def _result(prompt: str, res) -> dict:
    """A DecodeResult -> the generate_text fields."""
    full = res.to_dict()
    keep = ("label", "settings", "n_new_tokens", "sequence_logprob", "perplexity", "tokens_per_s",
            "finish_reason", "warnings", "truncated_prompt")
    return {"generated_text": prompt + res.text, "completion": res.text,
            "decoding": {k: full[k] for k in keep if k in full}}
