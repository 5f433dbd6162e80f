"""/challenges and /check_challenge: the list, and one challenge checked by running the model on the
learner's answer. A malformed answer is refused (InputError) before any model loads."""

from __future__ import annotations

import time

from backend.challenges import answers
from backend.challenges.registry import BY_ID, CHALLENGES, Challenge
from backend.runtime.device import gpu_task
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int, kind

SEED = 0  # every check is deterministic: greedy or beam decoding, forwards in eval mode, this seed besides


def describe(c: Challenge) -> dict:
    return {"id": c.id, "chapter": c.chapter, "title": c.title, "goal": c.goal,
            "answer_format": {**answers.schema(c.fields), "example": c.example},
            "tab": c.tab, "try_query": dict(c.try_query), "hint": c.hint}


def challenges(chapter=None) -> list[dict]:
    """Every challenge (or chapter `chapter`'s: 1-11; None, "" or 0 for all), in book order."""
    if chapter in (None, "", 0):
        return [describe(c) for c in CHALLENGES]
    return [describe(c) for c in CHALLENGES if c.chapter == as_int("chapter", chapter, lo=1, hi=11)]


def challenge(challenge_id) -> Challenge:
    if not isinstance(challenge_id, str) or challenge_id.strip() not in BY_ID:
        shown = repr(challenge_id[:60]) if isinstance(challenge_id, str) else kind(challenge_id)
        raise InputError(f"No challenge {shown}: challenge_id must be one of {', '.join(BY_ID)}.")
    return BY_ID[challenge_id.strip()]


def try_query(c: Challenge, values: dict) -> dict:
    """The helping tab's link query with the answer's values in place of "{name}"."""
    out = {}
    for key, template in c.try_query.items():
        for name, value in values.items():
            template = template.replace("{" + name + "}", "\n".join(value) if isinstance(value, list) else str(value))
        out[key] = template
    return out


def check_challenge(challenge_id, answer) -> dict:
    """{challenge, passed, reason, evidence, hint, tab, try_query, seconds} for the learner's `answer` (JSON text)."""
    c = challenge(challenge_id)
    values = answers.parse(c.fields, answer, c.example)
    start = time.perf_counter()
    passed, reason, evidence = _run(c, values)
    return {"challenge": c.id, "chapter": c.chapter, "passed": bool(passed), "reason": reason, "evidence": evidence,
            "hint": c.hint, "tab": c.tab, "try_query": try_query(c, values),
            "seconds": round(time.perf_counter() - start, 3)}


@gpu_task(duration=60)
def _run(c: Challenge, values: dict) -> tuple:
    import torch

    torch.manual_seed(SEED)
    return c.check(values)
