"""Span QA with an instruct decoder: the answer is always a span of the context (chapter 7).

Under the `local` profile there is no extractive QA model (no encoder with a start/end head).
The instruct decoder (SmolLM2-135M-Instruct) reads the context and the question through its
chat template, and its reply is scored as a *copy* of the context:

- Candidate spans. The reply's first token must be a context token (or the same word without
  its leading space, as a reply opens: " Warsaw" / "Warsaw"; both spellings count, their
  probabilities summed). The K context positions whose token the model most expects first
  are kept; from each, every continuation that copies the context forward (inside the same
  sentence, up to `max_answer_tokens`) is a candidate, closed by the end-of-turn token.
- One batched forward scores all of them exactly. The K copies are teacher-forced as K rows
  on top of the prompt's cache; row k's log-probs give, at each length, the probability of
  copying on and of ending there. A span's score is its sequence log-probability (its tokens
  and the end of turn, not length-normalised: the end is part of the answer, so "1,230 km"
  is judged complete and "1,230" is not). The reply can only be context text, and the
  tokenizer's offsets turn a span into exact character offsets: context[start:end] == answer.
- No answer (SQuAD 2.0's idea). The prompt tells the model to reply NO_ANSWER_REPLY when the
  text does not say; that reply is scored in the same batch. Two quantities are compared:
  answering = log-sum-exp of every distinct span's calibrated log-prob (the probability of
  answering at all, not of one wording: "Grace Wanjiru" and "Wanjiru" split it), and refusing
  = the no-answer reply's log-prob less its log-prob on the same excerpt when the question is
  content-free (how much *this question* pushes the model to refuse; some texts make it
  refuse whatever is asked). The result is "no answer" when answering - refusing <= `margin`
  (DEFAULT_MARGIN, chosen on the TUNING and two HELD_OUT sets with the rule below in place,
  reported on HELD_OUT_3: bench/qa.py). The best span alone against the raw reply refused too often (9 of 22
  answerable held-out questions, every one on some texts).
- No answer, second half: when a topic word of the question never occurs in the text
  (`question_terms`), the result is "no answer" whatever the spans score, and says which
  word. The reply comparison alone answers a question whose text holds a span of the asked-for
  kind about something else (a sum of money for "How much will a ticket cost?").
- Optional sentence selection. With `rank` (a function: question, sentences -> one score per
  sentence, e.g. embedding cosine), only the best `keep` sentences are shown to the decoder,
  in their original order; offsets still point into the full context.

`score` is the span's share of the probability of all replies scored (spans + the no-answer
reply), like the QA pipeline's softmax over spans. Every forward checks the request budget.
"""

from __future__ import annotations

import copy
import math
import re
import threading
import weakref
from dataclasses import dataclass

import torch

from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.engines.qa import question_terms
from backend.engines.qa.extractive_qa import answer_key
from backend.engines.tasks.text import device_of, model_max_length

NO_ANSWER_REPLY = "not in the text"
# No answer unless all spans (log-sum-exp) > the calibrated no-answer reply + this (nats). It was 0.2 before the
# absent-topic-word rule; with that rule in place, 0.2 down to -2.0 refuse the same 26 of the 27 unanswerable
# questions of TUNING + HELD_OUT + HELD_OUT_2, and -0.5 and -1.0 answer the most right (44 of 67): -0.5 is the
# more careful of the two.
DEFAULT_MARGIN = -0.5
MAX_ANSWER_TOKENS = 12
DEFAULT_CALIBRATION = 0.75  # weight of the content-free question's first-word log-prob taken out
NULL_QUESTION = "N/A"  # the content-free question (contextual calibration, Zhao et al. 2021)
KEEP_SENTENCES = 2  # with a `rank`: the sentences closest to the question that the decoder reads
STARTS = 16  # context positions (by first-token probability) whose copies are scored
INSTRUCTION = ("Answer the question by copying the exact words from the text. Keep the answer short. "
               f"If the text does not answer the question, reply: {NO_ANSWER_REPLY}\n\n")
_DEMOS = [  # one of each kind of answer; the no-answer one in the middle (the last demo biases most)
    ("The Brooklyn Bridge was designed by John Roebling. After his death in 1869 his son Washington took over "
     "the work, and the bridge opened in 1883.", "Who designed the Brooklyn Bridge?", "John Roebling"),
    ("Ada Lovelace wrote the first program for the Analytical Engine in 1843. The machine was never finished.",
     "How much did the Analytical Engine cost?", NO_ANSWER_REPLY),
    ("The ship left Bergen with a crew of six sailors and carried 40 tonnes of wheat to Riga.",
     "What did the ship carry?", "40 tonnes of wheat"),
    ("Lumera, a maker of bicycle lights, moved its headquarters from Lyon to Geneva in 2015. It employs 350 "
     "people.", "Where is Lumera's headquarters?", "Geneva"),
]
ASK = "Shorten the context."
SCORING = ("the reply's sequence log-probability: the copied span's tokens and the end of turn (not "
           "length-normalised); score = its share of all the replies scored, the no-answer reply included")


def messages(question: str, context: str, demos=None) -> list[dict]:
    out = []
    for text, q, a in (_DEMOS if demos is None else demos):
        out += [{"role": "user", "content": f"{INSTRUCTION}Text: {text}\n\nQuestion: {q}"},
                {"role": "assistant", "content": a}]
    return out + [{"role": "user", "content": f"{INSTRUCTION}Text: {context}\n\nQuestion: {question}"}]


# ------------------------------------------------------------------ sentences and the excerpt

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n")


def sentences(context: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence of `context`, whitespace trimmed, in order."""
    out, at = [], 0
    for m in list(_SENTENCE_END.finditer(context)) + [None]:
        end = m.start() if m is not None else len(context)
        s, e = at, end
        while s < e and context[s].isspace():
            s += 1
        while e > s and context[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
        at = m.end() if m is not None else len(context)
    return out


@dataclass
class Excerpt:
    text: str  # what the decoder reads
    origin: list[int]  # per character of text, its index in the context (-1: a joining space)
    pieces: list[tuple[int, int]]  # [start, end) in text of each sentence kept
    kept: list[int]  # which sentences of the context (indices), in order


def excerpt(context: str, question: str, rank=None, keep: int = KEEP_SENTENCES) -> Excerpt:
    """The sentences the decoder reads: all of them, or the `keep` best by `rank`, in order."""
    sents = sentences(context)
    kept = list(range(len(sents)))
    if rank is not None and len(sents) > keep:
        scores = list(rank(question, [context[s:e] for s, e in sents]))
        kept = sorted(sorted(kept, key=lambda i: -scores[i])[:keep])
    text, origin, pieces = "", [], []
    for i in kept:
        s, e = sents[i]
        if text:
            text += " "
            origin.append(-1)
        pieces.append((len(text), len(text) + e - s))
        text += context[s:e]
        origin += list(range(s, e))
    return Excerpt(text, origin, pieces, kept)


# ---------------------------------------------------------------------------- the prompt

@dataclass
class Prompt:
    ids: list[int]  # the whole prompt, generation prompt included
    offsets: list[tuple[int, int]]  # per prompt token, its [start, end) in the excerpt, or (-1, -1)
    piece: list[int]  # per prompt token, which excerpt piece (sentence) it starts in, or -1
    first: int  # index of the first prompt token inside the excerpt
    last: int  # one past the last
    prefix: int = 0  # the first `prefix` ids are the same for every question (the demos): cached


_MARK = "\u0000CONTEXT\u0000"


def build_prompt(tokenizer, question: str, ex: Excerpt, demos=None) -> Prompt:
    """The chat prompt as token ids, and where the excerpt's characters sit among them."""
    text = tokenizer.apply_chat_template(messages(question, _MARK, demos), tokenize=False,
                                         add_generation_prompt=True)
    if text.count(_MARK) != 1:
        raise InputError("The instruct model's chat template does not keep the context as given.")
    at = text.index(_MARK)
    text = text.replace(_MARK, ex.text)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, raw = list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
    end = at + len(ex.text)
    inside = [k for k, (s, e) in enumerate(raw) if e > s and s < end and e > at]
    if not inside:
        raise InputError("The context has no tokens the model can copy from.")
    offsets, piece = [(-1, -1)] * len(ids), [-1] * len(ids)
    for k in inside:
        s, e = max(raw[k][0], at) - at, min(raw[k][1], end) - at
        offsets[k] = (s, e)
        piece[k] = next((p for p, (ps, pe) in enumerate(ex.pieces) if ps <= s < pe or ps <= e - 1 < pe), -1)
    shown = _DEMOS if demos is None else demos
    head = tokenizer.apply_chat_template(messages("", "", shown)[:-1], tokenize=False) if shown else ""
    prefix = 0
    if head and text.startswith(head):
        head_ids = tokenizer(head, add_special_tokens=False)["input_ids"]
        prefix = len(head_ids) if ids[:len(head_ids)] == list(head_ids) and len(head_ids) < inside[0] else 0
    return Prompt(ids, offsets, piece, inside[0], inside[-1] + 1, prefix)


def inside_word(text: str, i: int) -> bool:
    """Whether the boundary before text[i] cuts a word or a number ("Wars|aw", "1,2|30")."""
    if i <= 0 or i >= len(text):
        return False
    a, b = text[i - 1], text[i]
    return ((a.isalnum() and b.isalnum())
            or (a in ",." and b.isdigit() and i >= 2 and text[i - 2].isdigit())
            or (b in ",." and a.isdigit() and i + 1 < len(text) and text[i + 1].isdigit()))


def char_span(prompt: Prompt, ex: Excerpt, k: int, length: int) -> tuple[int, int] | None:
    """Context [start, end) of prompt tokens k..k+length-1, whitespace trimmed.

    None when it is blank, only punctuation, or cuts a word or a number: an answer is whole words."""
    s, e = prompt.offsets[k][0], prompt.offsets[k + length - 1][1]
    while s < e and (ex.origin[s] < 0 or ex.text[s].isspace()):
        s += 1
    while e > s and (ex.origin[e - 1] < 0 or ex.text[e - 1].isspace()):
        e -= 1
    if e <= s or inside_word(ex.text, s) or inside_word(ex.text, e) or not any(c.isalnum() for c in ex.text[s:e]):
        return None  # nor is a comma alone an answer
    return ex.origin[s], ex.origin[e - 1] + 1


def bare_variant(tokenizer, token_id: int) -> int | None:
    """The same word without its leading space ("\u0120Warsaw" -> "Warsaw"), where the vocabulary has it."""
    piece = tokenizer.convert_ids_to_tokens(token_id)
    if isinstance(piece, str) and piece[:1] in ("\u0120", "\u2581") and len(piece) > 1:
        bare = tokenizer.convert_tokens_to_ids(piece[1:])
        if isinstance(bare, int) and bare != tokenizer.unk_token_id:
            return bare
    return None


def end_id(tokenizer) -> int:
    for tok in ("<|im_end|>", "<|eot_id|>", "<|end|>"):
        t = tokenizer.convert_tokens_to_ids(tok)
        if isinstance(t, int) and t != tokenizer.unk_token_id:
            return t
    if tokenizer.eos_token_id is None:
        raise InputError("The instruct model's tokenizer has no end-of-turn token to close an answer.")
    return int(tokenizer.eos_token_id)


def copy_runs(prompt: Prompt, max_tokens: int) -> list[tuple[int, int]]:
    """Per excerpt token k (prompt index), the longest copy from it: (k, length), inside one sentence."""
    runs = []
    for k in range(prompt.first, prompt.last):
        if prompt.piece[k] < 0:
            continue
        n = 1
        while n < max_tokens and k + n < prompt.last and prompt.piece[k + n] == prompt.piece[k]:
            n += 1
        runs.append((k, n))
    return runs


# ---------------------------------------------------------------------------- scoring

_PREFIXES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> {prefix ids: its cache}
_PREFIX_LOCK = threading.Lock()


def _prompt_cache(model, ids: list[int], prefix: int):
    """A fresh cache holding the first `prefix` prompt ids (the demos), built once per model."""
    if prefix <= 0:
        return None
    key = tuple(ids[:prefix])
    with _PREFIX_LOCK:
        known = _PREFIXES.setdefault(model, {})
        if key not in known:
            budget.check("no answer yet", ASK)
            _, cache = _forward(model, torch.tensor([list(key)], device=device_of(model)), None, 0)
            known.clear()
            known[key] = cache
        return copy.deepcopy(known[key])


def _forward(model, ids: torch.Tensor, cache, past: int):
    mask = torch.ones(ids.shape[0], past + ids.shape[1], dtype=torch.long, device=ids.device)
    out = model(input_ids=ids, past_key_values=cache, attention_mask=mask, use_cache=True)
    return out.logits.float().log_softmax(-1), out.past_key_values


def _spelled(first_lp: torch.Tensor, tok: int, bare: int | None) -> tuple[float, int]:
    """Log-prob of a first word in either spelling (summed), and the likelier spelling to copy on."""
    score, fed = float(first_lp[tok]), tok
    if bare is not None:
        alt = float(first_lp[bare])
        score, fed = float(torch.logaddexp(torch.tensor(score), torch.tensor(alt))), (bare if alt > score else tok)
    return score, fed


def _rows(prompt: Prompt, ex_text: str, first_lp, null_lp, tokenizer, max_tokens: int, starts: int,
          calibrate: float):
    """The `starts` copies whose first word the question makes most likely.

    With `null_lp` (the first-token log-probs when the question is content-free), a start is
    ranked by log p(word | question) - calibrate * log p(word | no question): the model's
    preference for a span whatever is asked (contextual calibration) is taken out.
    -> [(calibrated first score, raw first log-prob, null first log-prob, k, tokens)]"""
    cands = []
    for k, n in copy_runs(prompt, max_tokens):
        s = prompt.offsets[k][0]
        while s < len(ex_text) - 1 and ex_text[s].isspace():
            s += 1
        if inside_word(ex_text, s):
            continue  # a copy starts at a word's start
        tok = prompt.ids[k]
        bare = bare_variant(tokenizer, tok)
        raw, fed = _spelled(first_lp, tok, bare)
        null = _spelled(null_lp, tok, bare)[0] if null_lp is not None else 0.0
        cands.append((raw - calibrate * null, raw, null, k, [fed] + prompt.ids[k + 1:k + n]))
    cands.sort(key=lambda c: -c[0])
    return cands[:starts]


def _first_lp(model, ids: list[int], prefix: int, device, reply: list[int] | None = None):
    """The first reply token's log-probs after the prompt (and its cache); with `reply`, fed on
    in the same forward, also that reply's whole log-prob."""
    cache = _prompt_cache(model, ids, prefix)
    past = prefix if cache is not None else 0
    lp, cache = _forward(model, torch.tensor([ids[past:] + (reply or [])], device=device), cache, past)
    at = len(ids) - past - 1
    whole = sum(float(lp[0, at + j, t]) for j, t in enumerate(reply)) if reply else None
    return lp[0, at], cache, whole


def score_spans(model, tokenizer, prompt: Prompt, ex_text: str, max_tokens: int = MAX_ANSWER_TOKENS,
                starts: int = STARTS, null: Prompt | None = None,
                calibrate: float = 0.0) -> tuple[list[tuple], tuple[float, float]]:
    """Every candidate copy's log-prob.

    -> ([(logprob, prompt index k, length, null first-word log-prob)], (no-answer log-prob, its
    log-prob after the `null` prompt, 0 without one)); a span's logprob is the raw sum over its reply
    (first word, copy, end), and so is the no-answer reply's (its words, end)."""
    device = device_of(model)
    eot = end_id(tokenizer)
    refusal = tokenizer(NO_ANSWER_REPLY, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        budget.check("no answer yet", ASK)
        null_lp, na_null = None, 0.0
        if null is not None:  # the null prompt and, fed on in the same forward, the no-answer reply
            null_lp, _, na_null = _first_lp(model, null.ids, null.prefix, device, refusal + [eot])
            budget.check("no answer yet", ASK)
        first_lp, cache, _ = _first_lp(model, prompt.ids, prompt.prefix, device)
        cands = _rows(prompt, ex_text, first_lp, null_lp, tokenizer, max_tokens, starts, calibrate)
        rows = [c[4] for c in cands] + [refusal]
        width = max(len(r) for r in rows)
        batch = torch.tensor([r + [r[-1]] * (width - len(r)) for r in rows], device=device)
        cache.batch_repeat_interleave(len(rows))
        budget.check(f"the prompt read; {len(cands)} candidate starts to score", ASK)
        lp, _ = _forward(model, batch, cache, len(prompt.ids))
    spans = []
    for r, (_, total, null_first, k, row) in enumerate(cands):
        for j in range(len(row)):
            spans.append((total + float(lp[r, j, eot]), k, j + 1, null_first))
            if j + 1 < len(row):
                total += float(lp[r, j, row[j + 1]])
    na = float(first_lp[refusal[0]]) + sum(float(lp[-1, j, refusal[j + 1]]) for j in range(len(refusal) - 1))
    return spans, (na + float(lp[-1, len(refusal) - 1, eot]), na_null)


def answer_spans(model, tokenizer, question: str, context: str, top_n: int = 3,
                 max_answer_tokens: int = MAX_ANSWER_TOKENS, margin: float = DEFAULT_MARGIN,
                 rank=None, keep: int = KEEP_SENTENCES, starts: int = STARTS, demos=None,
                 calibrate: float = DEFAULT_CALIBRATION) -> dict:
    """The n best distinct spans of `context` answering `question`, and the no-answer decision.

    -> {"answers": [{answer, score, start, end, logprob, tokens}], "no_answer", "no_answer_reason" (None, "no
        spans", "absent terms" or "the reply is likelier"), "absent_terms", "answer_calibrated"
        (log-sum-exp of every distinct span's calibrated log-prob), "no_answer_score",
        "no_answer_logprob", "margin", "prompt_tokens", "context_tokens", "sentences",
        "sentences_read", "candidates", "why_fewer"}"""
    if not question.strip():
        raise InputError("The question is empty.")
    if not context.strip():
        raise InputError("The context is empty.")
    ex = excerpt(context, question, rank, keep)
    prompt = build_prompt(tokenizer, question, ex, demos)
    limit = model_max_length(model, tokenizer, default=2048)
    if len(prompt.ids) + max_answer_tokens + 1 > limit:
        raise InputError(f"The prompt for the instruct model is {len(prompt.ids)} tokens; with a "
                         f"{max_answer_tokens}-token answer it exceeds the model's {limit}-token window. {ASK}")
    null = build_prompt(tokenizer, NULL_QUESTION, ex, demos) if calibrate else None
    spans, (na, na_null) = score_spans(model, tokenizer, prompt, ex.text, max_answer_tokens, max(starts, top_n),
                                       null, calibrate)
    # Ranked by the calibrated log-prob (the span's, less `calibrate` x its first word's without the question).
    spans = [(total - calibrate * nf, k, n, total) for total, k, n, nf in spans]
    na_cal = na - na_null  # the reply's log-prob less its log-prob when the question says nothing
    norm = torch.logsumexp(torch.tensor([s[0] for s in spans] + [na_cal]), 0).item()
    answers, texts, keys = [], {}, set()
    for cal, k, n, total in sorted(spans, key=lambda t: -t[0]):
        where = char_span(prompt, ex, k, n)
        if where is None or context[where[0]:where[1]] in texts:
            continue
        text = context[where[0]:where[1]]
        texts[text] = cal  # every distinct wording counts towards answering at all
        if answer_key(text) in keys:
            continue  # but "at the age of 36." after "at the age of 36" is not another span to list
        keys.add(answer_key(text))
        answers.append({"answer": text, "score": math.exp(cal - norm), "start": where[0], "end": where[1],
                        "logprob": total, "calibrated": cal, "tokens": n})
    anyway = torch.logsumexp(torch.tensor(list(texts.values())), 0).item() if texts else -math.inf
    answers = answers[:top_n]
    why = None
    if len(answers) < top_n:
        why = (f"only {len(answers)} distinct span(s) of at most {max_answer_tokens} tokens were found "
               f"among the copies from the {max(starts, top_n)} most likely starts")
    absent = question_terms.absent_terms(question, context)
    reason = ("no spans" if not answers else "absent terms" if absent else
              "the reply is likelier" if anyway - na_cal <= margin else None)
    return {
        "answers": answers, "no_answer": reason is not None, "no_answer_reason": reason, "absent_terms": absent,
        "answer_calibrated": anyway,
        "no_answer_score": math.exp(na_cal - norm), "no_answer_logprob": na, "no_answer_calibrated": na_cal,
        "margin": margin, "calibrate": calibrate,
        "prompt_tokens": len(prompt.ids), "context_tokens": prompt.last - prompt.first,
        "sentences": len(sentences(context)), "sentences_read": len(ex.kept),
        "candidates": len(spans), "why_fewer": why,
    }


def embedding_rank(model, tokenizer):
    """A `rank` for `answer_spans`: cosine between the question and each sentence (a sentence embedder)."""
    from backend.engines.embedding.vectors import embed_texts

    def rank(question: str, sents: list[str]) -> list[float]:
        vectors = embed_texts([question] + list(sents), model, tokenizer)  # rows L2-normalised
        return (vectors[1:] @ vectors[0]).tolist()

    return rank
