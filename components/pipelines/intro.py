"""The Pipelines tab's opening paragraph, written from the serving decision (never by hand), so
what it says about each task's method is what the results will say."""

from __future__ import annotations

from components.shell import md_text

TASK_WORDS = {"classify": "sentiment", "zero_shot": "zero-shot", "ner": "NER", "qa": "QA",
              "summarize": "summarization", "translate": "translation", "fill_mask": "fill-mask",
              "generate_text": "text generation"}


def intro_markdown(methods: list[dict]) -> str:
    """`pipelines.serving_methods()` rows -> the paragraph: tasks grouped by how they are served."""
    groups: dict[str, list[str]] = {}
    for row in methods:
        groups.setdefault(row["name"], []).append(TASK_WORDS.get(row["task"], row["task"]))
    said = []
    for name, tasks in groups.items():
        who = ", ".join(tasks[:-1]) + (" and " if len(tasks) > 1 else "") + tasks[-1]
        said.append(f"{md_text(who)}: **{md_text(name)}**")
    return ("The book opens by running `pipeline()` on a customer's complaint letter. Each task below "
            "shows which checkpoint served it, where it came from and how long it took. On this app, "
            + "; ".join(said) + ". Each result says how it was served at its top.")
