"""The client cell's last lines: the run's JSON (`found`, what the endpoint returned) printed in the words the
library cell prints, so that a notebook shows the same result twice and a reader can compare the two.

    printed.lines("search", result)  # -> ['for hit in found["results"]:', '    print(...)']

An endpoint without lines of its own prints its JSON whole (indented), which still holds every number the page
shows. Plain strings, like every snippet."""

from __future__ import annotations

from typing import Callable

WHOLE = ["import json", "print(json.dumps(found, indent=1, ensure_ascii=False))  # the endpoint's JSON, whole"]


def _search(result: dict) -> list[str]:
    # the library cell prints each hit's score (4 decimals), id and passage as embedded ("title: text"), cut at 80
    return ['for hit in found["results"]:',
            "    print(round(float(hit[\"score\"]), 4), int(hit[\"id\"]), "
            "f\"{hit['title']}: {' '.join(hit['text'].split())}\"[:80])"]


def _build_index(result: dict) -> list[str]:
    return ['print(found["count"], "passages indexed")']


def _generated(result: dict) -> list[str]:
    return ['for output in found["outputs"]:', '    print(repr(output["text"]))']


def _tokenize(result: dict) -> list[str]:
    return ['for role, r in found["results"].items():',
            '    if "error" not in r:',
            '        print(role, [t["token"] for t in r["tokens"]], r["ids"], [(t["start"], t["end"]) for t in r["tokens"]])']


def _classify(result: dict) -> list[str]:
    if (result.get("model") or {}).get("method") != "fine-tuned":
        return WHOLE
    return ['for r in found["results"]:',
            '    print(sorted(zip(r["labels"], r["scores"]), key=lambda lp: -lp[1]), r["sequence"][:40])']


def _completion(result: dict) -> list[str]:
    return ['print(repr(found["completion"]))']  # /generate_text's one sequence's new text


def _tagged(result: dict) -> list[str]:
    return ['print(list(zip(found["tokens"], found["tags"])))']  # each word with its tag


LINES: dict[str, Callable[[dict], list[str]]] = {
    "search": _search, "build_index": _build_index, "decode": _generated, "tokenize": _tokenize,
    "classify": _classify, "generate_text": _completion, "multilingual_ner": _tagged}


def lines(endpoint: str, result: dict) -> list[str]:
    """The lines that print `found` for this endpoint's run."""
    write = LINES.get(endpoint)
    return write(result or {}) if write is not None else list(WHOLE)
