"""The reader's answer-type check (backend/engines/qa/answer_type.py), with and without it, one run.

  .venv/bin/python bench/qa_answer_type.py     # the seen sets, then HELD_OUT_5 (written blind, measured once)

The reader trained here (chapter 7) answers each question twice on the same spans: as it ranks them, and
with the spans that are not the kind of thing asked set aside. Per set: right answers (token F1 >= 0.5),
wrong answers (F1 < 0.5 to an answerable question, or any answer to an unanswerable one), answerable
questions refused, unanswerable ones refused; then every question whose answer changed. Writes
bench/results/qa_answer_type.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TLAB_PROFILE"] = "local"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend import hub  # noqa: E402
from backend.engines.qa import reader, squad_metrics  # noqa: E402
from backend.runtime import config, env  # noqa: E402
from tests.integration.qa_sets import HELD_OUT, HELD_OUT_2, TUNING  # noqa: E402
from tests.integration.qa_sets_3 import HELD_OUT_3  # noqa: E402
from tests.integration.qa_sets_4 import HELD_OUT_4  # noqa: E402
from tests.integration.qa_sets_5 import HELD_OUT_5  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "qa_answer_type.md"
SETS = {"TUNING + HELD_OUT 1-4 (seen: the rules were chosen on them)": TUNING + HELD_OUT + HELD_OUT_2 + HELD_OUT_3
        + HELD_OUT_4, "HELD_OUT_5 (blind for the first version, seen since: see below)": HELD_OUT_5}
if env.is_set("TLAB_BLIND_6"):
    from tests.integration.qa_sets_6 import HELD_OUT_6  # noqa: E402

    SETS["HELD_OUT_6 (written blind after the revision, measured once)"] = HELD_OUT_6


def _answers(lm, question: str, context: str, check: bool) -> str | None:
    keep = reader._of_the_asked_kind
    if not check:
        reader._of_the_asked_kind = lambda q, c, scored, null, threshold: (scored, [])
    try:
        o = reader.answer(lm.model, lm.tokenizer, question, context, top_n=1)
    finally:
        reader._of_the_asked_kind = keep
    return None if o["no_answer"] else o["answers"][0]["answer"]


def _right(expected, got) -> bool:
    if expected is None:
        return got is None
    return got is not None and squad_metrics.score([expected], got)[1] >= 0.5


def tally(rows, which: int) -> list[int]:
    right = wrong = refused_answerable = refused_none = 0
    for _, _, expected, *answers in rows:
        got = answers[which]
        if expected is None:
            refused_none += got is None
            wrong += got is not None
        elif got is None:
            refused_answerable += 1
        else:
            right += _right(expected, got)
            wrong += not _right(expected, got)
    return [right, wrong, refused_answerable, refused_none]


def main() -> None:
    lm = hub.load("qa")
    assert lm.method == config.METHOD_FINETUNED, "the local profile's qa role is the reader trained here"
    lines = ["# The reader's answer-type check, with and without it (bench/qa_answer_type.py)", "",
             "Same reader, same spans; 'with' sets aside a span that is not the kind of thing asked "
             "(backend/engines/qa/answer_type.py). Right: token F1 >= 0.5. Wrong: F1 < 0.5, or any answer to an "
             "unanswerable question.", ""]
    for name, cases in SETS.items():
        rows = [(q, c, e, _answers(lm, q, c, False), _answers(lm, q, c, True)) for c, q, e in cases]
        n_none = sum(e is None for _, _, e in cases)
        lines += [f"## {name}: {len(cases)} questions ({len(cases) - n_none} answerable, {n_none} not)", "",
                  "| reader | right | wrong | answerable refused | unanswerable refused |", "|---|---|---|---|---|"]
        for label, which in (("without the check", 0), ("with the check", 1)):
            r = tally(rows, which)
            lines.append(f"| {label} | {r[0]} | {r[1]} | {r[2]} | {r[3]} |")
        lines += ["", "Answers that changed:", ""]
        for q, _, e, before, after in rows:
            if before != after:
                verdict = ("better" if _right(e, after) and not _right(e, before) else
                           "worse" if _right(e, before) and not _right(e, after) else "neither right")
                lines.append(f"- {q} -> {before!r} becomes {after!r} (expected {e!r}): {verdict}")
        lines.append("")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
