"""Checks on the decoder (chapter 5): greedy decoding that loops and what no_repeat_ngram_size does to it,
beam search against greedy, and a prompt whose next token is nearly certain."""

from __future__ import annotations

from backend.challenges import models


def repeated_ngram(ids: list[int], start: int = 0, n: int = 3) -> tuple[int, int] | None:
    """(where it first occurred, where it occurs again) of the first n-gram of `ids` that occurs twice and whose
    second occurrence ends at or after position `start` (the first generated token: what no_repeat_ngram_size
    forbids is a generated token completing an n-gram the sequence, prompt included, already holds)."""
    seen: dict[tuple, int] = {}
    for i in range(len(ids) - n + 1):
        gram = tuple(ids[i:i + n])
        if gram in seen and i + n - 1 >= start:
            return seen[gram], i
        seen.setdefault(gram, i)
    return None


def _new_ids(r: dict) -> list[int]:
    return list(r["outputs"][0]["token_ids"])


def _where(pos: int, prompt_len: int) -> str:
    return f"prompt token {pos}" if pos < prompt_len else f"new token {pos - prompt_len}"


def stop_the_loop(v: dict):
    """Greedy decoding of N new tokens completes a 3-gram the text already holds (prompt included, as
    no_repeat_ngram_size counts them); with no_repeat_ngram_size=3 the same prompt does not."""
    n = v["max_new_tokens"]
    greedy = models.decode(v["prompt"], strategy="greedy", max_new_tokens=n)
    prompt, ids = list(greedy["prompt_token_ids"]), _new_ids(greedy)
    found = repeated_ngram(prompt + ids, start=len(prompt))
    ev = {"greedy_text": greedy["text"], "new_tokens": len(ids)}
    if found is None:
        return False, (f"Greedy decoding of {len(ids)} new tokens repeats no 3-gram: nothing to stop. Try a prompt "
                       "that invites a list or a chant, or more new tokens."), ev
    first, again = found
    whole = prompt + ids
    gram = "".join(models.decoder_tokens(whole[again:again + 3]))
    done_at = again + 2 - len(prompt)  # the new token that completed the repeat
    fixed = models.decode(v["prompt"], strategy="greedy", max_new_tokens=n, no_repeat_ngram_size=3)
    fixed_ids = _new_ids(fixed)
    still = repeated_ngram(prompt + fixed_ids, start=len(prompt))
    ev.update(repeated_3gram=gram, first_at=_where(first, len(prompt)), again_at=_where(again, len(prompt)),
              completed_by_new_token=done_at, no_repeat_text=fixed["text"],
              instead="".join(models.decoder_tokens(fixed_ids[done_at:done_at + 3])),
              no_repeat_repeats=None if still is None else
              "".join(models.decoder_tokens((prompt + fixed_ids)[still[1]:still[1] + 3])))
    if still is None:
        return True, (f"Greedy repeats {gram!r}: it first occurs at {ev['first_at']}, and new token {done_at} "
                      f"completes it again. With no_repeat_ngram_size=3 the model writes {ev['instead']!r} from new "
                      f"token {done_at} instead, and repeats no 3-gram."), ev
    return False, f"Even with no_repeat_ngram_size=3 the new tokens repeat {ev['no_repeat_repeats']!r}.", ev


def beam_beats_greedy(v: dict):
    """Beam search (4 beams) finds N tokens whose log-probability beats greedy's by at least BEAM_GAIN."""
    n = v["max_new_tokens"]
    same = {"max_new_tokens": n, "min_new_tokens": n}
    greedy = models.decode(v["prompt"], strategy="greedy", **same)
    beam = models.decode(v["prompt"], strategy="beam", num_beams=4, **same)
    gain = beam["sequence_logprob"] - greedy["sequence_logprob"]
    ev = {"greedy": {"text": greedy["text"], "logprob": round(greedy["sequence_logprob"], 3)},
          "beam_4": {"text": beam["text"], "logprob": round(beam["sequence_logprob"], 3)}, "gain": round(gain, 3)}
    if gain >= BEAM_GAIN:
        return True, (f"Beam search's {n} tokens have log-probability {beam['sequence_logprob']:.2f} against greedy's "
                      f"{greedy['sequence_logprob']:.2f}: {gain:.2f} nats better, by not taking the best token at "
                      "every step."), ev
    if greedy["text"] == beam["text"]:
        return False, "Beam search found greedy's own text: on this prompt the best token at each step is the best path.", ev
    return False, f"Beam search beats greedy by only {gain:.2f} nats (needs {BEAM_GAIN}).", ev


BEAM_GAIN = 1.0


def sure_next_token(v: dict):
    """A prompt whose next token has probability at least SURE: top-p 0.9 would keep that one token alone."""
    r = models.decode(v["prompt"], strategy="greedy", max_new_tokens=1)
    step = r["steps"][0]
    ev = {"next_token": step["token"], "prob": round(step["prob"], 4),
          "candidates": [{"token": c["token"], "prob": round(c["prob"], 4)} for c in step["candidates"]]}
    if step["prob"] >= SURE:
        return True, (f"The model gives {step['token']!r} probability {step['prob']:.3f}: top-p 0.9 keeps it alone, "
                      "so sampling here is greedy."), ev
    return False, f"The likeliest next token, {step['token']!r}, has only {step['prob']:.3f} (needs {SURE}).", ev


SURE = 0.9


def int8_same_text(v: dict):
    """Chapter 8: a prompt on which the decoder's int8 copy writes the same N greedy tokens as the original."""
    n = v["max_new_tokens"]
    fp32 = models.decode(v["prompt"], strategy="greedy", max_new_tokens=n)
    int8 = models.decode(v["prompt"], int8=True, strategy="greedy", max_new_tokens=n)
    a, b = _new_ids(fp32), _new_ids(int8)
    agree = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    ev = {"fp32_text": fp32["text"], "int8_text": int8["text"], "same_tokens": agree, "new_tokens": len(a)}
    if a == b:
        return True, f"int8 and fp32 write the same {len(a)} tokens: {fp32['text']!r}.", ev
    ev["diverge_at"] = {"fp32": "".join(models.decoder_tokens(a[agree:agree + 3])),
                        "int8": "".join(models.decoder_tokens(b[agree:agree + 3]))}
    return False, (f"They agree for {agree} tokens, then fp32 writes {ev['diverge_at']['fp32']!r} and int8 "
                   f"{ev['diverge_at']['int8']!r}: rounding the weights changed a close choice."), ev
