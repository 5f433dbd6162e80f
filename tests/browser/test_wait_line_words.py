"""The wait line's words (components/shell/assets/wait.js, `__tlabWaitText`): the learner's wait and the rest
of it at a precision that tells them apart ("You waited 1.0 s ... the other 1.0 s" beside a 0.06 s model time
read as a contradiction). No app: the script alone on a blank page."""

from __future__ import annotations

from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "components" / "shell" / "assets" / "wait.js"


def test_the_wait_and_the_rest_never_read_the_same(page):
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=SCRIPT.read_text().replace("__FIGURES__", "[]"))
    said = page.evaluate("() => window.__tlabWaitText(1.04, 0.06, 'model time 0.06 s')")
    assert said.startswith("You waited 1.04 s") and "the other 0.98 s" in said and '"model time 0.06 s"' in said
    said = page.evaluate("() => window.__tlabWaitText(4.2, 0.5, 'model time 0.50 s')")
    assert said.startswith("You waited 4.2 s") and "the other 3.7 s" in said
