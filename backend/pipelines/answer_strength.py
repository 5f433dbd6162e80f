"""Whether a QA answer is a weak one, said with the threshold chosen: a span the model gives less than WEAK of
its probability is a guess (the model spread the rest over other spans or no answer), and its lead over the
next span says how much the choice between them rests on."""

from __future__ import annotations

WEAK = 0.5  # under half the model's probability on the chosen span: a weak answer


def judge(r: dict) -> dict | None:
    """{"weak", "threshold", "score", "margin" (to the next span), "text"} for a QA result; None without a
    scored answer (no answer, or a method that gives no score)."""
    if r.get("no_answer") or r.get("score") is None or not r.get("answer"):
        return None
    score = float(r["score"])
    answers = r.get("answers") or []
    second = next((a for a in answers[1:] if a.get("score") is not None), None)
    margin = None if second is None else score - float(second["score"])
    weak = score < WEAK
    if weak:
        text = (f"Weak answer: the model gives this span {score:.2f} of its probability, under the {WEAK:.2f} we call "
                "confident here; read it as a guess and check the context")
    else:
        text = f"The model gives this span {score:.2f} of its probability (at least {WEAK:.2f}: a confident answer)"
    if second is not None:
        text += f"; the next span, \"{second['answer'][:60]}\", has {float(second['score']):.2f} ({margin:+.2f})"
    return {"weak": weak, "threshold": WEAK, "score": round(score, 4),
            "margin": None if margin is None else round(margin, 4), "text": text + "."}
