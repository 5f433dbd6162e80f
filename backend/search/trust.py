"""Which of Ask the corpus's two answers to trust, and why, in one line made from the result itself.

The extractive answer is a span copied from a retrieved passage, and the reader gave it only because its
margin (best span - the [CLS] "no answer" logit) passed the threshold chosen on held-out questions. The
generated answer is written word by word; the support check (reader.check_answer) lists what in it no
retrieved passage contains. So:
- the reader answered: trust the span (it is the passage's own words); say whether the generated text is
  supported and whether it agrees with the span;
- the reader refused and the generated text is fully supported: the generated answer, read against its
  passage (its words are all there, but support is not proof that it answers the question);
- otherwise neither: the passages probably do not hold the answer; the refusal names the passage that came
  closest.
"""

from __future__ import annotations

from backend.engines.qa.squad_metrics import normalize_answer


def _name(passages: list[dict], i: int | None) -> str:
    if not i or not 1 <= i <= len(passages):
        return "no passage"
    return f"[{i}] {passages[i - 1].get('title') or 'untitled'}"


def _unsupported(support: dict | None) -> int | None:
    """How many items of the generated answer no passage contains; None when it was not checked."""
    return None if not support else int((support.get("counts") or {}).get("total", 0))


def _generated_words(generated: str, support: dict | None) -> str:
    n = _unsupported(support)
    if not (generated or "").strip():
        return "there is no generated answer"
    if n is None:
        return "the generated answer was not checked against the passages"
    if n == 0:
        return "every number, name and content word of the generated answer is in the passages"
    return f"the generated answer has {n} item{'s' if n != 1 else ''} no retrieved passage contains"


def closest_words(extractive: dict, passages: list[dict]) -> str:
    """The refusal's closest passage, in words."""
    c = extractive.get("closest")
    if not c:
        return "no passage had a span to weigh"
    t = extractive.get("threshold")
    below = f", not above its threshold {t:+.2f}" if t is not None else ""
    said = f" ('{c['answer']}')" if c.get("answer") else ""
    return f"{_name(passages, c['passage'])} came closest{said}, margin {c['margin']:+.2f}{below}"


def which_to_trust(extractive: dict | None, generated: str, support: dict | None, passages: list[dict]) -> dict:
    """-> {"trust": "extractive" | "generated" | "neither", "line": the one line the page shows,
    "generated_supported": bool or None (not checked), "agree": does the generated text contain the span}."""
    n = _unsupported(support)
    supported = None if n is None else (n == 0 and bool((generated or "").strip()))
    gen = _generated_words(generated, support)
    if extractive is None:
        if supported:
            return {"trust": "generated", "generated_supported": True, "agree": None,
                    "line": f"Trust the generated answer with care: {gen}, but no extractive reader checked it."}
        return {"trust": "neither", "generated_supported": supported, "agree": None,
                "line": f"Trust neither: {gen}, and no extractive reader answered."}
    if not extractive.get("no_answer") and extractive.get("answer"):
        span = normalize_answer(extractive["answer"])
        agree = bool(span) and span in normalize_answer(generated or "")
        t = extractive.get("threshold")
        why = (f"it is copied word for word from {_name(passages, extractive.get('passage'))}, and the reader's "
               f"margin {extractive['margin']:+.2f} is above its threshold"
               + (f" {t:+.2f}" if t is not None else ""))
        tail = ("" if not agree else "; the generated answer says the same" if supported
                else "; the generated answer holds the same span, beside what no passage says")
        return {"trust": "extractive", "generated_supported": supported, "agree": agree,
                "line": f"Trust the extractive answer: {why}; {gen}{tail}."}
    closest = closest_words(extractive, passages)
    if supported:
        return {"trust": "generated", "generated_supported": True, "agree": False,
                "line": f"Trust the generated answer with care: the reader found no span it would stand by "
                        f"({closest}); {gen}, but support is not proof that it answers the question."}
    return {"trust": "neither", "generated_supported": supported, "agree": False,
            "line": f"Trust neither: the passages probably do not answer this. The reader refused ({closest}); "
                    f"{gen}."}
