"""The README's Space front matter says what the code does."""

from __future__ import annotations

from pathlib import Path

from backend.runtime import config

README = Path(__file__).resolve().parents[3] / "README.md"


def front_matter() -> list[str]:
    lines = README.read_text().splitlines()
    assert lines[0] == "---"
    return lines[1 : lines.index("---", 1)]


def test_preload_from_hub_lists_exactly_the_book_checkpoints():
    lines = front_matter()
    start = lines.index("preload_from_hub:") + 1
    listed = []
    for line in lines[start:]:
        if not line.startswith("  - "):
            break
        listed.append(line[4:].split()[0])
    assert sorted(listed) == sorted({spec.checkpoint for spec in config.BOOK.values()})


def test_space_runs_our_app_on_the_pinned_gradio():
    fields = dict(line.split(": ", 1) for line in front_matter() if ": " in line and not line.startswith(("#", " ")))
    requirements = (README.parent / "requirements.txt").read_text()
    assert fields["sdk"] == "gradio" and fields["app_file"] == "app.py"
    assert f"gradio=={fields['sdk_version']}" in requirements


def test_the_code_map_names_every_backend_package():
    """The README's code map describes what is there: every package of backend/ is in it."""
    text = README.read_text()
    code_map = text[text.index("## Where the code lives"):text.index("## API (gradio_client)")]
    packages = sorted(p.parent.name for p in (README.parent / "backend").glob("*/__init__.py"))
    assert [p for p in packages if f"{p}/" not in code_map] == []


def test_the_code_map_names_every_tab_package_of_the_ui():
    text = README.read_text()
    code_map = text[text.index("## Where the code lives"):text.index("## API (gradio_client)")]
    packages = sorted(p.parent.name for p in (README.parent / "components").glob("*/__init__.py"))
    assert [p for p in packages if p not in code_map] == []


def test_every_docs_link_of_the_readme_opens_a_file_that_links_back():
    import re

    linked = re.findall(r"\]\((docs/[^)#]+)\)", README.read_text())
    assert linked, "the README links its docs/ chapters"
    for rel in linked:
        page = README.parent / rel
        assert page.is_file(), rel
        assert "(../README.md)" in page.read_text(), rel



def test_every_api_name_is_documented_in_the_api_reference():
    from tests.helpers.api_cases import CASES

    reference = (README.parent / "docs" / "api.md").read_text()
    missing = sorted(name for name in CASES if f"`{name}`" not in reference and f"{name}`" not in reference
                     and f"{name}\"" not in reference)
    assert missing == []
