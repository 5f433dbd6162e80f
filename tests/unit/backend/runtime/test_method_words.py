"""One source for what a serving method is: config.METHOD_WORDS. The Pipelines intro, the result
badges and the README's table say what it says, and a changed method changes every text."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from backend import pipelines
from backend.runtime import config
from components.shell import model_badge
from components.pipelines.intro import intro_markdown

ROOT = Path(__file__).resolve().parents[4]


def test_a_changed_method_changes_the_intro_and_the_badge(monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "local")
    before = intro_markdown(pipelines.serving_methods())
    assert "sentiment, NER and QA: **fine-tuned here**" in before  # QA: the reader trained here
    assert "zero-shot: **embedding similarity**" in before
    # Serve offline sentiment by embedding similarity instead: every text follows the decision.
    monkeypatch.setitem(config.LOCAL, "sentiment", replace(config.LOCAL["sentiment"], method=config.METHOD_EMBEDDING))
    rows = {r["task"]: r for r in pipelines.serving_methods()}
    assert rows["classify"]["method"] == config.METHOD_EMBEDDING
    after = intro_markdown(list(rows.values()))
    assert "sentiment, NER" not in after and "NER and QA: **fine-tuned here**" in after
    assert "sentiment and zero-shot: **embedding similarity**" in after
    badge = model_badge({"checkpoint": "m", "source": "package", "method": rows["classify"]["method"],
                         "role": "sentiment"})
    assert config.method_name(config.METHOD_EMBEDDING) in badge and "fine-tuned here" not in badge


def test_every_method_has_words_and_the_badge_uses_them():
    used = {spec.method for spec in list(config.LOCAL.values()) + list(config.BOOK.values()) if spec}
    assert used | {config.METHOD_SESSION} <= set(config.METHOD_WORDS)
    for method in used - {config.METHOD_MODEL}:
        badge = model_badge({"checkpoint": "m", "source": "package", "method": method, "role": "ner"})
        assert config.method_name(method) in badge, method


def _phrases() -> list[str]:
    """The names and the fixed clauses of every method's description."""
    out = []
    for name, text in config.METHOD_WORDS.values():
        out.append(name)
        out += [part.strip() for part in re.split(r"\{task\}|[:;(),]", text) if len(part.strip()) > 25]
    return [p for p in out if len(p) > 12]


def test_no_hand_written_description_of_a_method_outside_its_one_source():
    files = [p for p in (ROOT / "backend").rglob("*.py")] + list((ROOT / "components").glob("*.py")) + [ROOT / "app.py"]
    found = []
    for path in files:
        if path == ROOT / "backend" / "runtime" / "config.py":
            continue
        text = path.read_text()
        # docstrings and comments may name a method; strings shown to people may not describe one
        code = re.sub(r'""".*?"""', "", text, flags=re.S)
        code = re.sub(r"#[^\n]*", "", code)
        found += [f"{path.relative_to(ROOT)}: {p!r}" for p in _phrases() if p in code]
    assert found == []


def test_the_readme_table_names_each_local_method_by_its_name():
    text = (ROOT / "README.md").read_text()
    table = text[text.index("| role | `book`"):text.index("- `auto`")]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:] if line.startswith("|")}
    for role, spec in config.LOCAL.items():
        if spec is None or spec.method == config.METHOD_MODEL:
            continue
        row = next(line for names, line in rows.items() if role in [n.strip() for n in names.split(",")])
        assert config.method_name(spec.method) in row, (role, spec.method)
