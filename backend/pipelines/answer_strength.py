"""Whether a QA answer is a weak one, said with the threshold chosen: the model's probability on the chosen span
and on the listed spans that overlap it ("in 1799" and "1799" are one answer, which a span's own score splits)
under WEAK is a guess; its lead over the next span that does NOT overlap it says how much the choice rests on."""

from __future__ import annotations

WEAK = 0.5  # under half the model's probability on the chosen answer (its span and the listed ones overlapping it)


def _overlaps(a: dict, b: dict) -> bool:
    if None in (a.get("start"), a.get("end"), b.get("start"), b.get("end")):
        return a.get("answer") == b.get("answer")
    return a["start"] < b["end"] and b["start"] < a["end"]


def judge(r: dict) -> dict | None:
    """{"weak", "threshold", "score", "support" (with the overlapping spans), "margin" (to the next other span),
    "text"} for a QA result; None without a scored answer (no answer, or a method that gives no score)."""
    if r.get("no_answer") or r.get("score") is None or not r.get("answer"):
        return None
    score = float(r["score"])
    best = {"answer": r["answer"], "start": r.get("start"), "end": r.get("end")}
    scored = [a for a in (r.get("answers") or []) if a.get("score") is not None]
    same = [a for a in scored[1:] if _overlaps(best, a)]
    other = next((a for a in scored[1:] if not _overlaps(best, a)), None)
    support = score + sum(float(a["score"]) for a in same)
    margin = None if other is None else support - float(other["score"])
    weak = support < WEAK
    said = f"{score:.2f} of its probability" + (
        f", {support:.2f} with the listed spans that overlap it ({', '.join(repr(a['answer'][:40]) for a in same)})"
        if same else "")
    if weak:
        text = (f"Weak answer: the model gives this span {said}, under the {WEAK:.2f} we call confident here; read it "
                "as a guess and check the context")
    else:
        text = f"The model gives this span {said}: at least {WEAK:.2f}, a confident answer"
    if other is not None:
        text += f"; the next other span, \"{other['answer'][:60]}\", has {float(other['score']):.2f} ({margin:+.2f})"
    return {"weak": weak, "threshold": WEAK, "score": round(score, 4), "support": round(support, 4),
            "margin": None if margin is None else round(margin, 4), "text": text + "."}
