"""QA with the reader trained here (chapter 7), as the Pipelines' `qa` runner reports it.

`backend.engines.qa.reader` does the work (span head, n-best post-processing, [CLS] as "no answer");
this fills the runner's result: the no-answer decision in words, the scoring rule, the windows.
"""

from __future__ import annotations

from backend.engines.qa import reader as span_reader

READER_SCORING = ("start logit + end logit of a span (n-best starts x n-best ends, at most {n} tokens); 'no answer' "
                  "is the [CLS] span's start + end logit, and wins when the best span beats it by no more than the "
                  "threshold chosen on the QA set's validation split; score = softmax over the n-best spans and [CLS]")
NO_ANSWER_CLS = "[CLS] (no answer)"


def windows_notice(r: dict, out: dict) -> None:
    if out["windows"] > 1:
        r["notices"].append(f"The context was read in {out['windows']} overlapping windows "
                            f"of {out['max_length']} tokens (stride {out['stride']}).")


def reader_answer(r: dict, lm, question: str, context: str, top_n: int, stride: int, max_answer_tokens: int):
    """The reader trained here (chapter 7): span head, n-best post-processing, [CLS] as no answer."""
    out = span_reader.answer(lm.model, lm.tokenizer, question, context, top_n=top_n, stride=stride,
                             max_answer_tokens=max_answer_tokens)
    answers = out.pop("answers")
    r.update(out, answers=answers, scoring=READER_SCORING.format(n=max_answer_tokens), no_answer_reply=NO_ANSWER_CLS,
             no_answer_reason="the [CLS] span wins" if out["no_answer"] else None, absent_terms=[])
    windows_notice(r, out)
    for a in out["set_aside"][:2]:
        r["notices"].append(f"The reader's span '{a['answer']}' scored higher but was set aside: {a['reason']} "
                            "(an answer-type check the span head cannot make).")
    if out["no_answer"]:
        margin = "no span" if out["margin"] is None else f"{out['margin']:+.2f}"
        r["notices"].append(f"No answer in this text: the best span beats the [CLS] 'no answer' span by {margin} "
                            f"(start + end logits), not more than the threshold {out['threshold']:+.2f}. The spans "
                            "listed are the ones the reader rejected.")
    return answers, "the context has no more distinct spans within the answer-length limit"
