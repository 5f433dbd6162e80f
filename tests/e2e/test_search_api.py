"""/build_index and /search through gradio_client against the running app (`app_url`)."""

from __future__ import annotations

import pytest
from gradio_client import Client, handle_file

# corpus, file, paste, text field, title field, keep good lines, words, overlap,
# index type, M, efConstruction, efSearch, nlist, nprobe, pq_m, pq_bits
DEFAULTS = dict(file=None, paste="", text_field=None, title_field="", keep_good=False,
                max_words=120, overlap=30, index_type="flat", m=32, efc=40, efs=16,
                nlist=100, nprobe=8, pq_m=16, pq_bits=8)


def build(client: Client, corpus: str, **kw):
    a = {**DEFAULTS, **kw}
    return client.predict(corpus, a["file"], a["paste"], a["text_field"], a["title_field"],
                          a["keep_good"], a["max_words"], a["overlap"], a["index_type"], a["m"],
                          a["efc"], a["efs"], a["nlist"], a["nprobe"], a["pq_m"], a["pq_bits"],
                          api_name="/build_index")


def search(client: Client, query: str, k: int = 5) -> dict:
    return client.predict(query, k, api_name="/search")[2]


@pytest.fixture(scope="module")
def two_clients(app_url):
    return Client(app_url, verbose=False), Client(app_url, verbose=False)


def test_build_glossary_and_search(two_clients):
    c, _ = two_clients
    md, stats, badge = build(c, "glossary", index_type="hnsw")
    assert stats["count"] >= 200 and stats["dims"] == 384
    assert stats["index_type"] == "HNSW" and 0.0 <= stats["recall_at_k"] <= 1.0
    assert stats["memory_bytes"] > 0 and stats["query_ms_median"] > 0
    assert "all-MiniLM-L6-v2" in stats["model"]["checkpoint"] and "MiniLM" in badge
    res = search(c, "make a model smaller by teaching a student to imitate a teacher", 5)
    assert len(res["results"]) == 5
    assert res["results"][0]["title"] == "Knowledge distillation"
    scores = [r["score"] for r in res["results"]]
    assert scores == sorted(scores, reverse=True)
    assert res["timing_ms"]["total"] > 0


def test_two_clients_never_see_each_others_passages(two_clients, tmp_path):
    alice, bob = two_clients
    a = tmp_path / "alice.txt"
    a.write_text("Alice's zebra lives in the aquarium.\nAlice paints violet lighthouses.\n"
                 "Alice counts marbles every Sunday.\n")
    b = tmp_path / "bob.jsonl"
    b.write_text('{"text": "Bob repairs antique clocks.", "t": "clocks"}\n'
                 '{"text": "Bob grows giant pumpkins for the fair.", "t": "pumpkins"}\n'
                 '{"text": "Bob sails to the lighthouse on Fridays.", "t": "sailing"}\n')
    _, sa, _ = build(alice, "upload", file=handle_file(str(a)))
    _, sb, _ = build(bob, "upload", file=handle_file(str(b)), text_field="text", title_field="t")
    assert sa["count"] == 3 and sb["count"] == 3
    for who, client, other in (("Alice", alice, "Bob"), ("Bob", bob, "Alice")):
        for q in ("lighthouse", f"{other}'s hobbies", "zebra aquarium pumpkins clocks"):
            res = search(client, q, 10)
            texts = [r["text"] for r in res["results"]]
            assert texts and all(t.startswith(who) for t in texts), (who, q, texts)
    assert {r["title"] for r in search(bob, "pumpkin", 3)["results"]} == {"clocks", "pumpkins", "sailing"}


def test_paste_and_k_larger_than_corpus(app_url):
    c = Client(app_url, verbose=False)
    _, stats, _ = build(c, "paste", paste="red apples\n\ngreen pears\n\nyellow bananas")
    assert stats["count"] == 3
    res = search(c, "fruit", 10)
    assert len(res["results"]) == 3 and any("larger than the corpus" in n for n in res["notes"])


def test_ivf_with_too_few_vectors_adapts_and_says_so(app_url):
    c = Client(app_url, verbose=False)
    _, stats, _ = build(c, "paste", paste="\n".join(f"note number {i} about {w}" for i, w in
                                                     enumerate(["cats", "dogs", "cars", "rain", "tea", "jazz"])),
                        index_type="ivf_flat", nlist=100)
    assert stats["settings"]["nlist"] < 6
    assert any("too few for nlist=100" in n for n in stats["notes"])


@pytest.mark.parametrize("kwargs,match", [
    (dict(corpus="paste", paste="   "), "empty"),
    (dict(corpus="paste", paste="just one document"), "only one passage"),
    (dict(corpus="upload"), "No file uploaded"),
])
def test_build_bad_inputs_give_clear_errors(app_url, kwargs, match):
    c = Client(app_url, verbose=False)
    corpus = kwargs.pop("corpus")
    with pytest.raises(Exception, match=match):
        build(c, corpus, **kwargs)


def test_bad_files_give_clear_errors(app_url, tmp_path):
    c = Client(app_url, verbose=False)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "fine"}\n{oops\n{"text": "also fine"}\n')
    with pytest.raises(Exception, match="line 2"):
        build(c, "upload", file=handle_file(str(broken)))
    _, stats, _ = build(c, "upload", file=handle_file(str(broken)), keep_good=True)
    assert stats["count"] == 2 and any("line 2" in n for n in stats["corpus_notes"])
    table = tmp_path / "t.csv"
    table.write_text("title,body\na,first\nb,second\n")
    with pytest.raises(Exception, match="no column 'content'"):
        build(c, "upload", file=handle_file(str(table)), text_field="content")
    binary = tmp_path / "x.txt"
    binary.write_bytes(b"\x00\x01\x02binary\x00" * 20)
    with pytest.raises(Exception, match="binary"):
        build(c, "upload", file=handle_file(str(binary)))


def test_search_bad_inputs(app_url):
    c = Client(app_url, verbose=False)
    # No index yet and a bad query: refused before the glossary is built for it.
    with pytest.raises(Exception, match="empty"):
        search(c, "  ")
    build(c, "paste", paste="one\ntwo\nthree")
    with pytest.raises(Exception, match="empty"):
        search(c, "  ")
    with pytest.raises(Exception, match="characters long"):
        search(c, "word " * 1000)


def test_ask_corpus_cites_retrieved_passages(app_url):
    c = Client(app_url, verbose=False)
    build(c, "glossary")
    md, out, badge = c.predict("What does top-p sampling keep?", 3, api_name="/ask_corpus")
    assert out["answer"] and out["question"].startswith("What does top-p")
    assert len(out["passages"]) == 3 and any("Top-p" in p["title"] for p in out["passages"])
    assert all(1 <= n <= 3 for n in out["cited"])
    assert out["reader_method"] in ("model", "instruct-fallback")
    # the local qa role is the reader trained here (an encoder): the decoder writes the generative answer,
    # and the reader's own extractive answer comes beside it (chapter 7's retriever-reader)
    assert out["model"]["role"] == "decoder" and out["model"]["checkpoint"] in badge
    assert "extractive" in out and set(out["extractive"]) >= {"answer", "no_answer"}
    assert "Generated answer" in md and "Extractive answer" in md  # both readers' answers, side by side
    # the extractive reader is the one adapted to the glossary; the page says which answer to trust and why
    assert out["extractive"]["model"]["checkpoint"].endswith("reader adapted to the glossary")
    assert out["trust"]["trust"] in ("extractive", "generated", "neither") and "**Which to trust:**" in md
    assert md.index("Which to trust") < md.index("Retrieved passages") < md.index("Extractive answer") < md.index(
        "Generated answer")
    if out["reader_method"] == "instruct-fallback":  # free text: the badge names prompting, not span copying
        assert out["model"]["method"] == "instruct-fallback" and "span" not in badge
        assert out["engine"] == {"kind": "in-process"}
        if out["finish_reason"] == "length":
            assert "64-token limit" in md


def test_auto_index_type_picks_flat_for_the_glossary_and_says_why(app_url):
    from backend.search.corpora import load_glossary

    c = Client(app_url, verbose=False)
    n = len(load_glossary())
    md, stats, _ = build(c, "glossary", index_type="auto")
    assert stats["index_type"] == "Flat (exact)" and stats["settings"]["kind"] == "flat"
    assert stats["index_choice"]["auto"] is True and stats["index_choice"]["kind"] == "flat"
    assert stats["index_choice"]["reason"].startswith(f"auto -> Flat (exact): {n:,} vectors x 384 dims")
    assert "**Index choice:** auto -&gt; Flat \\(exact\\)" in md
    res = search(c, "split words into pieces", 3)
    assert res["index_choice"] == stats["index_choice"] and len(res["results"]) == 3
    _, sq8, _ = build(c, "glossary", index_type="sq8")
    assert sq8["index_type"] == "SQ8 (8-bit scalar)" and sq8["index_choice"]["auto"] is False
    assert sq8["memory_bytes"] * 3.5 < stats["memory_bytes"]
    assert sq8["recall_at_k"] >= 0.9


def test_first_search_without_a_build_uses_the_glossary(app_url):
    c = Client(app_url, verbose=False)
    out = c.predict("make a model smaller by teaching a student to imitate a teacher", 5,
                    api_name="/search")
    res = out[2]
    assert res["corpus"] == "glossary" and res["results"][0]["title"] == "Knowledge distillation"
    assert res["notes"][0].startswith("No index in this session yet: built the glossary index")
    assert res["auto_built"]["index_choice"]["kind"] == "flat"
    assert len(out) == 4  # /search keeps its outputs: html, map, JSON, badge
    assert res["map"]["dims"] == 384 and len(res["map"]["explained_variance"]) == 2
