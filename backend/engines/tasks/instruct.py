"""The instruct-model fallback: a small chat model prompted for a task it was not built for.

Under the `local` profile there is no dedicated summarisation or translation model, so the
instruct decoder (SmolLM2-135M-Instruct) gets a task prompt through its chat template. Its free
text is parsed into the same result shapes as the dedicated models. The NER parser (entities
with character offsets found in the input; what cannot be grounded is dropped, never invented)
stays for a profile that serves NER this way; none does today: offline NER is a model trained
here (backend.hub.ner_builder) and offline QA may only copy spans (backend.engines.qa.span_qa).
"""

from __future__ import annotations

import math
import re

import torch

from backend.runtime import budget
from backend.engines.generation.generate import early_finish, stopping_criteria
from backend.engines.generation.prefill import PrefillStopped, prefilled, shape_of
from backend.runtime.memory_budget import check_generation
from backend.runtime.errors import InputError
from backend.engines.tasks.text import device_of, model_max_length

_TYPE_SYNONYMS = {
    "PER": "PER", "PERSON": "PER", "PERSONS": "PER", "PEOPLE": "PER", "PERSONA": "PER", "NAME": "PER",
    "CHARACTER": "PER",
    "ORG": "ORG", "ORGANIZATION": "ORG", "ORGANISATION": "ORG", "COMPANY": "ORG", "CORPORATION": "ORG",
    "BRAND": "ORG",
    "LOC": "LOC", "LOCATION": "LOC", "PLACE": "LOC", "GPE": "LOC", "CITY": "LOC", "COUNTRY": "LOC",
    "MISC": "MISC", "PRODUCT": "MISC", "OTHER": "MISC", "EVENT": "MISC", "WORK_OF_ART": "MISC",
}
_CONNECTORS = {"of", "the", "de", "von", "van", "der", "and", "&", "la", "le", "du", "da", "di"}

NER_INSTRUCTION = (
    "List the named entities in the text, one per line as TYPE: name. TYPE is PER (person), "
    "ORG (organization), LOC (location) or MISC (other names, e.g. products).\n\nText: "
)
NER_DEMO = [
    {"role": "user", "content": NER_INSTRUCTION
     + "Angela Merkel visited the Siemens plant in Munich and tried the new iPhone."},
    {"role": "assistant", "content": "PER: Angela Merkel\nORG: Siemens\nLOC: Munich\nMISC: iPhone"},
]

REPETITION_PENALTY = 1.1  # chat_generate's, for every instruct reply (the snippets write the same)


def ner_messages(text: str) -> list[dict]:
    return NER_DEMO + [{"role": "user", "content": NER_INSTRUCTION + text}]


def summary_messages(text: str, sentences: int = 2) -> list[dict]:
    n = "one sentence" if sentences == 1 else f"{sentences} sentences"
    return [{"role": "user", "content": f"Summarize the following text in {n}.\n\n{text}"}]


def translation_messages(text: str, source: str, target: str) -> list[dict]:
    return [{"role": "user", "content": f"Translate the following text from {source} to {target}. "
             f"Reply with the {target} translation only.\n\n{text}"}]


def chat_prompt(tokenizer, messages: list[dict], max_new_tokens: int, window: int) -> tuple[str, list[int]]:
    """The chat template's text and its ids, for this process and the generation server alike
    (`remote_chat`); refuses a prompt that leaves no room for `max_new_tokens` in the `window`."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    if len(ids) + max_new_tokens > window:
        raise InputError(
            f"The prompt for the instruct model is {len(ids)} tokens; with {max_new_tokens} new tokens it "
            f"exceeds the model's {window}-token window. Shorten the text."
        )
    return text, ids


def chat_generate(model, tokenizer, messages: list[dict], max_new_tokens: int = 96,
                  **generate_kwargs) -> dict:
    """Generate a reply to `messages` -> {text, prompt_tokens, new_tokens, mean_logprob, finish_reason,
    warnings} in this process (`remote_chat.chat` is the server's twin; `mean_logprob` is raw).

    Runs under the request's budget: generation stops at the deadline (or a cancel) with the
    text so far and finish_reason "time budget" ("stopped"); "eos" / "length" otherwise.
    """
    _, ids = chat_prompt(tokenizer, messages, max_new_tokens, model_max_length(model, tokenizer, default=2048))
    kwargs = dict(do_sample=False, repetition_penalty=REPETITION_PENALTY, stopping_criteria=stopping_criteria())
    kwargs.update(generate_kwargs)
    width = int(kwargs.get("num_beams") or 1)
    # The beams' cache and every step's logits (kept for the mean log-prob) grow with the beams.
    check_generation(shape_of(model), len(ids), max_new_tokens, width, width > 1, keep_logits=True,
                     what="This reply")
    ids = torch.tensor([ids], device=device_of(model))
    enc = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    budget.check("nothing generated yet", "Ask for less work, e.g. fewer texts in one batch.")
    if tokenizer.pad_token_id is None:
        kwargs.setdefault("pad_token_id", tokenizer.eos_token_id)
    try:  # the prompt in chunks that Stop and the budget reach (a long text is thousands of tokens)
        kwargs["past_key_values"] = prefilled(model, ids, width)
    except PrefillStopped as exc:
        return {"text": "", "prompt_tokens": int(ids.shape[1]), "new_tokens": 0, "mean_logprob": float("nan"),
                "finish_reason": early_finish() or "stopped", "warnings": [f"Stopped before the reply began ({exc})."]}
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=max_new_tokens, return_dict_in_generate=True,
                             output_logits=True, **kwargs)
        new = out.sequences[0, enc["input_ids"].shape[1]:]
        # The model's own distribution (raw logits, before the repetition penalty): the figure the
        # server's log-probs give too (backend.engines.server.chat).
        steps = torch.stack([s[0].float().log_softmax(-1) for s in out.logits])  # (steps, vocab)
        logps = steps[torch.arange(len(new)), new[: len(steps)]]
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    keep = [i for i, t in enumerate(new.tolist()) if t not in special]
    mean_lp = float(logps[keep].mean()) if keep else float("nan")
    ended = bool(len(new)) and int(new[-1]) in special
    finish = "eos" if ended else (early_finish() if len(new) < max_new_tokens else None) or "length"
    return {
        "text": tokenizer.decode(new, skip_special_tokens=True).strip(),
        "prompt_tokens": int(enc["input_ids"].shape[1]),
        "new_tokens": len(keep),
        "mean_logprob": mean_lp,
        "finish_reason": finish,
        "warnings": [],
    }


# ---------------------------------------------------------------- parsers (pure functions)

def _clean(s: str) -> str:
    s = s.strip().strip("*").strip()
    s = re.sub(r"^[-*\u2022\d.)\s]+", "", s)  # bullets and numbering
    s = s.strip().strip("\"'`“”‘’").strip()
    return s.rstrip(".,;:!?").strip()


def _type_of(word: str) -> str | None:
    key = re.sub(r"[^A-Za-z_]", "", word).upper()
    return _TYPE_SYNONYMS.get(key)


def _looks_like_name(s: str) -> bool:
    words = s.split()
    if not words or len(words) > 6 or not words[0][:1].isupper():
        return False
    return all(w[:1].isupper() or w[:1].isdigit() or w.lower() in _CONNECTORS for w in words)


def parse_ner_output(raw: str) -> list[tuple[str, str]]:
    """Model text -> [(TYPE, surface)], forgiving about the format.

    Understands `TYPE: name`, `name: TYPE`, `name (TYPE)`, `name - TYPE`, bullets, numbering,
    several names after one type separated by commas, and bare capitalised names (MISC).
    """
    pairs: list[tuple[str, str]] = []
    for line in (raw or "").splitlines():
        line = line.strip()
        if not line:
            continue
        m = re.match(r"^(.*?)\s*\(([A-Za-z_ ]+)\)\s*[.,;]?$", line)
        if m and _type_of(m.group(2)):
            pairs.append((_type_of(m.group(2)), _clean(m.group(1))))
            continue
        parts = re.split(r"\s*(?::|\s-\s|\s–\s|=)\s*", line, maxsplit=1)
        if len(parts) == 2:
            left, right = _clean(parts[0]), parts[1].strip()
            if _type_of(left):
                for name in re.split(r"\s*[,;]\s*", right):
                    if _clean(name):
                        pairs.append((_type_of(left), _clean(name)))
                continue
            if _type_of(_clean(right)):
                pairs.append((_type_of(_clean(right)), left))
                continue
            # Unknown label on either side: keep whichever side looks like a name.
            for side in (left, _clean(right)):
                if _looks_like_name(side) and not side.isupper():
                    pairs.append(("MISC", side))
            continue
        cleaned = _clean(line)
        if _looks_like_name(cleaned):
            pairs.append(("MISC", cleaned))
    seen, unique = set(), []
    for typ, name in pairs:
        if name and (typ, name) not in seen:
            seen.add((typ, name))
            unique.append((typ, name))
    return unique


def find_all(text: str, needle: str) -> list[tuple[int, int]]:
    """Every occurrence of `needle` in `text` on word boundaries: exact case first, else any case."""
    if not needle:
        return []
    pattern = r"(?<!\w)" + re.escape(needle) + r"(?!\w)"
    spans = [(m.start(), m.end()) for m in re.finditer(pattern, text)]
    if not spans:
        spans = [(m.start(), m.end()) for m in re.finditer(pattern, text, flags=re.IGNORECASE)]
    return spans


def ground_entities(text: str, pairs: list[tuple[str, str]]) -> tuple[list[dict], list[dict]]:
    """Map (TYPE, surface) pairs to character spans in `text` -> (entities, dropped).

    Every occurrence is tagged; overlaps keep the longer (earlier-listed on ties) entity.
    Names that do not occur in the text are returned in `dropped`, not invented.
    """
    candidates, dropped = [], []
    for order, (typ, name) in enumerate(pairs):
        spans = find_all(text, name)
        if not spans:
            dropped.append({"entity_group": typ, "word": name, "reason": "not found in the text"})
        for s, e in spans:
            candidates.append((s, e, typ, order))
    candidates.sort(key=lambda c: (-(c[1] - c[0]), c[3]))
    taken: list[tuple[int, int, str]] = []
    for s, e, typ, _ in candidates:
        if all(e <= ts or s >= te for ts, te, _ in taken):
            taken.append((s, e, typ))
    taken.sort()
    entities = [
        {"entity_group": typ, "word": text[s:e], "start": s, "end": e, "score": None}
        for s, e, typ in taken
    ]
    return entities, dropped


_PREAMBLE = re.compile(
    r"^(here is|here's|sure[,!]?|summary|the summary|in summary|translation|german|french|"
    r"spanish|the translation)[^\n:]{0,60}:\s*",
    re.IGNORECASE,
)


def parse_free_text(raw: str) -> str:
    """Summary / translation text: drop a leading 'Here is the summary:'-style preamble."""
    text = (raw or "").strip()
    text = _PREAMBLE.sub("", text, count=1).strip()
    return text.strip("\"“”").strip()


def probability(mean_logprob: float) -> float | None:
    """exp(mean token log-prob): the model's own confidence in its reply (not calibrated)."""
    if mean_logprob is None or math.isnan(mean_logprob):
        return None
    return float(math.exp(mean_logprob))
