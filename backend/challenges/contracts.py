"""The challenges' contracts (backend/runtime/contract.py): /challenges is a lookup; /check_challenge takes a
challenge id and an answer of at most answers.MAX_ANSWER_CHARS, and costs what its check runs: one short
forward of a small model for most, and for the decoder's challenges the generations it makes (priced as the
Decoding tab prices them: the prompt read once, then N steps of 1 or 4 sequences)."""

from __future__ import annotations

from backend.challenges import answers
from backend.challenges.registry import BY_ID
from backend.runtime.contract import SMALL, Contract, Cost, Free, Int
from backend.runtime.errors import InputError

ROLE = "decoder"
# the generations each decoder challenge makes: (sequences per step, beam search?) per run of N new tokens
DECODES = {"stop-the-loop": ((1, False), (1, False)), "beam-beats-greedy": ((1, False), (4, True)),
           "int8-same-text": ((1, False), (1, False)), "sure-next-token": ((1, False),)}
CHECK = Cost(mb=256, s=5.0, what="this check")  # a forward or two of a small model on a short answer


def check_cost(values: dict) -> Cost:
    """The check's cost; an answer the handler will refuse costs nothing here (the handler names what is wrong)."""
    cid = values.get("challenge_id")
    c = BY_ID.get(cid.strip()) if isinstance(cid, str) else None
    if c is None:
        return SMALL
    if c.id not in DECODES:
        return CHECK
    try:
        parsed = answers.parse(c.fields, values.get("answer"), c.example)
    except InputError:
        return SMALL
    from backend.hub import sizing

    n = int(parsed.get("max_new_tokens", 1))
    prompt = sizing.tokens(ROLE, parsed["prompt"]) + 16
    runs = [sizing.generation_cost(ROLE, prompt, n, width, beam, what="this check's generation")
            for width, beam in DECODES[c.id]]
    return Cost(mb=max(r.mb for r in runs), s=sum(r.s for r in runs), stoppable=True,
                step_s=max(r.step_s for r in runs), what="this check's generations",
                ask="Ask for fewer new tokens, or a shorter prompt.")


CONTRACTS = {
    "challenges": Contract({"chapter": Int(0, 11, optional=True)}, SMALL),
    "check_challenge": Contract({"challenge_id": Free(100), "answer": Free(answers.MAX_ANSWER_CHARS)}, check_cost,
                                notes="the answer is JSON text; its fields are read by the check's own parser"),
}
