"""What every /summarize result gains, whichever path wrote the summary (the instruct fallback
here or on the server, a seq2seq checkpoint, a model-box model): chapter 6's checks.

- `support`: the numbers, names and content words of the summary that the text does not contain
  (`support.check_support`; names from the NER role's token classifier when there is one);
- a note when the summary stopped at its token limit in mid-sentence (`cut_at_limit`);
- `extractive`: sentences picked by the embedder (MMR to the centroid) beside lead-3;
- `rouge_table`: ROUGE-1/2/L F1 of the model's summary, lead-3 and the extractive summary
  against the reference, when one was given (else an empty list).
"""

from __future__ import annotations

from typing import Callable

from backend.engines.tasks import support
from backend.pipelines import tasks
from backend.runtime import config
from backend.pipelines.extractive import extractive_summary
from backend.pipelines.metrics import rouge, rouge_table
from backend.runtime.errors import LabError

WHY = ("An abstractive model writes each word from what it learned, not by copying the text, so "
       "a fluent summary can state numbers, names and facts the text never gave.")
TABLE_NAMES = ("model summary", "lead-3", "extractive (MMR)")


def run(r: dict, text: str, reference: str | None, settings: dict, model_for: Callable) -> dict:
    """Add the checks to the summary result `r` (in place) and return it. `model_for(role)`:
    the loaded model of the `ner` or `embedder` role, or None where it cannot serve now."""
    summary = r.get("summary") or ""
    entities, note = _entities(summary, model_for)
    r["support"] = support.check_support(summary, text, entities)
    r["support"]["why"] = WHY
    if note:
        r["support"]["note"] = note
    limit = settings.get("max_new_tokens")
    r["cut_at_limit"] = support.cut_at_limit(summary, r.get("finish_reason"), r.get("output_tokens"), limit)
    if r["cut_at_limit"]:
        r["notices"].insert(0, f"The summary stopped at its limit of {limit} new tokens in mid-sentence: "
                               "raise the maximum length for a whole last sentence.")
    r["extractive"] = _extractive(text, model_for, r)
    r["rouge_table"] = []
    if reference:
        candidates = {TABLE_NAMES[0]: summary, TABLE_NAMES[1]: r["baseline"]["summary"]}
        if r["extractive"] is not None:
            r["extractive"]["rouge"] = rouge(r["extractive"]["summary"], reference)
            candidates[TABLE_NAMES[2]] = r["extractive"]["summary"]
        r["rouge_table"] = rouge_table(candidates, reference)
    return r


def _entities(summary: str, model_for: Callable) -> tuple[list[dict] | None, str | None]:
    """The NER role's entities in the summary, or (None, why names come from capitalised spans)."""
    if not summary.strip():
        return [], None
    try:
        lm = model_for("ner")
    except LabError as exc:
        return None, f"Names are capitalised spans only: the NER model could not load ({exc})."
    if lm is None or lm.model is None or lm.method == config.METHOD_INSTRUCT:
        return None, ("Names are capitalised spans only: the NER role is not a token classifier "
                      "ready on this app.")
    out = tasks.ner(lm, [summary])
    return out["results"][0]["entities"], None


def _extractive(text: str, model_for: Callable, r: dict) -> dict | None:
    try:
        lm = model_for("embedder")
    except LabError as exc:
        r["notices"].append(f"No extractive summary: the sentence encoder could not load ({exc}).")
        return None
    if lm is None or lm.model is None:
        r["notices"].append("No extractive summary: the embedder role has no sentence encoder ready.")
        return None
    out = extractive_summary(lm.model, lm.tokenizer, text)
    r["notices"] += out.pop("notices")
    return out
