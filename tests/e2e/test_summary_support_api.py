"""/summarize's chapter 6 fields through gradio_client against the running app (`local` profile):
`support` (unsupported numbers, names and words with offsets, counts), `cut_at_limit`,
`extractive` and `rouge_table`; hostile text keeps the offsets exact."""

from __future__ import annotations

from tests.helpers.pipelines_calls import call
from tests.helpers.summary_texts import NEWS, REFERENCE


def test_summarize_json_has_the_check_the_extractive_summary_and_the_table(client):
    _, r = call(client, "/summarize", NEWS, 12, 0, 0, REFERENCE, "")
    s = r["support"]
    assert set(s) >= {"unsupported", "counts", "checked", "names_from", "why"}
    assert set(s["counts"]) == {"number", "name", "word", "total"} and s["counts"]["total"] == len(s["unsupported"])
    for item in s["unsupported"]:
        assert set(item) == {"text", "start", "end", "kind", "found_by", "reason"}
        assert r["summary"][item["start"]:item["end"]] == item["text"]
    assert isinstance(r["cut_at_limit"], bool)
    assert r["extractive"]["summary"] and len(r["extractive"]["picked"]) == 3
    assert [row["summary"] for row in r["rouge_table"]] == ["model summary", "lead-3", "extractive (MMR)"]
    _, plain = call(client, "/summarize", NEWS, 8, 0, 0, "", "")
    assert plain["rouge_table"] == [] and "rouge" not in plain["extractive"]
