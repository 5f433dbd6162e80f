"""The search entry points through the real hub path: tiny models saved with the real
MiniLM tokenizer serve the `embedder` and `qa` roles (TLAB_MODEL_<ROLE>), each test on a
fresh, non-persisting service."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from backend import search
from backend.runtime.errors import InputError
from backend.engines.qa.extractive_qa import answer_question
from backend.engines.embedding.vectors import embed_texts
from backend.search import api
from backend.search import service as S
from backend.search.corpora import load_glossary
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

DOCS = ["Lighthouses guide ships along dangerous coasts.",
        "Sourdough bread rises thanks to wild yeast.",
        "The violin has four strings tuned in fifths.",
        "Glaciers carve U-shaped valleys.",
        "Honeybees dance to show where flowers are.",
        "Owls hunt at night with silent feathers.",
        "Tides follow the pull of the moon."]
PASTE = "\n".join(DOCS)


@pytest.fixture(scope="module")
def embedder_dir(tmp_path_factory):
    return save_tiny(tiny_bert(seed=0), minilm_tokenizer(), tmp_path_factory.mktemp("tiny-embedder"))


@pytest.fixture(scope="module")
def qa_dir(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=minilm_tokenizer().vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37)
    model = BertForQuestionAnswering(cfg).eval()
    return save_tiny(model, minilm_tokenizer(), tmp_path_factory.mktemp("tiny-qa"))


@pytest.fixture()
def service(tmp_path, monkeypatch, embedder_dir):
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(embedder_dir))
    svc = S.SearchService(tmp_path, persist=False)
    monkeypatch.setattr(S.SERVICE, "_value", svc)
    return svc


def build_paste(sid="s1", **kw):
    return search.build_index(sid, "paste", paste=PASTE, **kw)


# ----------------------------------------------------------------------------- build
def test_build_index_from_paste_through_the_hub(service, embedder_dir):
    stats = build_paste()
    assert stats["count"] == len(DOCS) and stats["dims"] == 32
    assert stats["index_type"] == "Flat (exact)" and stats["recall_at_k"] == 1.0
    assert stats["corpus"] == "pasted text" and stats["shared"] is False
    assert stats["model"]["role"] == "embedder"
    assert stats["model"]["checkpoint"] == str(embedder_dir)
    assert stats["model"]["source"] == "local-dir"
    json.dumps(stats)


def test_build_index_settings_as_object_or_dict(service):
    a = build_paste(settings=search.IndexSettings("ivf_flat", nlist=100, nprobe=8))
    b = build_paste("s2", settings={"kind": "ivf_flat", "nlist": 100, "nprobe": 8})
    for st in (a, b):
        assert st["index_type"] == "IVF-Flat" and st["settings"]["nlist"] == 1
        assert any("too few for nlist=100" in n for n in st["notes"])
    with pytest.raises(InputError, match="Unknown index setting"):
        build_paste(settings={"kind": "flat", "trees": 3})


def test_build_index_glossary_is_shared(service):
    a = search.build_index("a", "glossary")
    b = search.build_index("b", "glossary")
    assert a["shared"] is True and a["count"] == len(load_glossary())
    assert service.current("a") is service.current("b")
    assert b["embeddings_from_cache"] is False  # persist=False: the shared entry, not a file


def test_build_index_reports_progress(service):
    calls = []
    build_paste(progress=lambda f, d: calls.append((f, d)))
    assert calls[0] == (0.0, "Reading the corpus")
    assert (0.92, "Building the index") in calls
    assert calls[-1] == (0.97, "Measuring latency and recall")
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions)


def test_build_index_bad_sources(service):
    with pytest.raises(InputError, match="No file uploaded"):
        search.build_index("s", "upload")
    with pytest.raises(InputError, match="choice must be one of glossary, docstrings, upload, paste; "
                                         "got 'web'."):
        search.build_index("s", "web")
    with pytest.raises(InputError, match="max_words must be a whole number"):
        search.build_index("s", "paste", paste=PASTE, max_words=float("nan"))
    with pytest.raises(InputError, match="No session id"):
        search.build_index("", "paste", paste=PASTE)


def test_limits_come_from_config(tmp_path, monkeypatch, embedder_dir):
    monkeypatch.setenv("TLAB_SEARCH_MAX_PASSAGES", "3")
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(embedder_dir))
    svc = S.SearchService(tmp_path, persist=False)
    monkeypatch.setattr(S.SERVICE, "_value", svc)
    assert svc.limits.max_passages == 3
    with pytest.raises(InputError, match="more than 3 passages"):
        build_paste()


# ----------------------------------------------------------------------------- search
def test_search_finds_a_passage_by_its_own_text(service):
    build_paste()
    res = search.search("s1", f"doc 4: {DOCS[3]}", 3)  # passages embed as "title: text"
    assert "_query_vector" not in res
    assert [r["rank"] for r in res["results"]] == [1, 2, 3]
    assert res["results"][0]["text"] == DOCS[3]
    assert res["results"][0]["score"] == pytest.approx(1.0, abs=1e-3)
    assert res["count"] == len(DOCS) and res["k"] == 3
    m = res["map"]
    assert m["total_points"] == len(DOCS) and len(m["x"]) == len(DOCS)
    assert [n["id"] for n in m["neighbours"]] == [r["id"] for r in res["results"]]
    assert m["query"] is not None
    json.dumps(res)


def test_first_search_builds_the_glossary_itself(service):
    # No index in the session: the glossary is built (auto index choice) and searched, and it says so.
    res = search.search("nobody", "anything", 3)
    n = len(load_glossary())
    assert res["corpus"] == "glossary" and res["count"] == n and len(res["results"]) == 3
    assert res["notes"][0] == (f"No index in this session yet: built the glossary index "
                               f"({n:,} passages, Flat (exact)) first.")
    assert res["auto_built"]["index_choice"]["auto"] is True and res["index_choice"]["kind"] == "flat"
    assert res["index_choice"]["reason"].startswith(f"auto -> Flat (exact): {n:,} vectors x 32 dims")
    # what a notebook needs to build the same index (the code view's snippet is written from it)
    held = res["index_settings"]
    assert (held["kind"], held["faiss_class"], held["metric"], held["normalization"]) == (
        "flat", "IndexFlatIP", "inner_product", "l2")
    assert held["embedder"] and held["query_prefix"] == held["passage_prefix"] == "" and held["pooling"] == "mean"
    # The next search uses that index: no second build, no note.
    again = search.search("nobody", "tokens", 2)
    assert "auto_built" not in again and again["notes"] == []
    # A bad query fails before anything is built.
    with pytest.raises(InputError, match="empty"):
        search.search("nobody2", "   ", 3)
    assert S.get_service().current("nobody2") is None


def test_build_index_reports_the_auto_index_choice(service):
    st = build_paste()  # default index type: auto
    assert st["index_type"] == "Flat (exact)" and st["index_choice"]["auto"] is True
    assert st["index_choice"]["reason"] == ("auto -> Flat (exact): 7 vectors x 32 dims = 0.0 M floats <= 8 M, "
                                            "so one exact query costs ~0.00 ms on one thread.")
    st = build_paste("s3", settings=search.index_settings("hnsw", 8, 20, 50))
    assert {k: st["index_settings"][k] for k in ("kind", "faiss_class", "M", "efConstruction", "efSearch")} == {
        "kind": "hnsw", "faiss_class": "IndexHNSWFlat", "M": 8, "efConstruction": 20, "efSearch": 50}
    st = build_paste("s2", settings=search.index_settings("flat"))
    assert st["index_choice"] == {"auto": False, "kind": "flat", "reason": "Flat (exact): chosen in the settings."}
    assert search.index_settings().kind == "auto"
    assert search.index_settings("sq8").kind == "sq8"
    with pytest.raises(InputError, match="index_type"):
        search.index_settings("annoy")


def test_search_needs_a_query(service):
    build_paste()
    with pytest.raises(InputError, match="empty"):
        search.search("s1", "   ", 3)


def test_drop_session_forgets_the_index(service):
    build_paste()
    search.drop_session("s1")
    assert S.get_service().current("s1") is None
    # Its pasted passages are gone: a search now gets the glossary, built afresh.
    res = search.search("s1", "bees", 3)
    assert res["corpus"] == "glossary" and "auto_built" in res
    with pytest.raises(InputError, match="build one first"):
        search.compare_indexes("s3", 5)
    search.drop_session("")  # a page without a session: nothing to do


# ----------------------------------------------------------------------------- ask
def test_ask_retrieves_then_reads_with_the_qa_role(service, monkeypatch, qa_dir):
    monkeypatch.setenv("TLAB_MODEL_QA", str(qa_dir))
    build_paste()
    q = "What do honeybees do?"
    out = search.ask("s1", q, 10)
    assert len(out["passages"]) == search.ASK_MAX_PASSAGES  # k=10 is capped at 5
    assert out["question"] == q and out["reader_method"] == "model"
    assert out["model"]["role"] == "qa" and out["model"]["checkpoint"] == str(qa_dir)
    assert out["retriever_model"]["role"] == "embedder"
    # The extractive reader cites the one passage whose best span scored highest.
    from backend import hub

    lm = hub.load("qa")
    scores = [answer_question(lm.model, lm.tokenizer, q, p["text"], top_n=1)["answers"][0]["score"]
              for p in out["passages"]]
    best = max(range(len(scores)), key=scores.__getitem__) + 1
    assert out["cited"] == [best] and out["citations_from"] == "reader"
    assert out["score"] == round(float(scores[best - 1]), 4)
    json.dumps(out)


def test_ask_reranks_the_dense_candidates_with_bm25(service, monkeypatch, qa_dir):
    """Ask's retrieval (backend.search.retrieval): the index's nearest passages (here all 7, fewer than
    hybrid.CANDIDATES) re-ranked by the fused score; the Search tab's search stays dense."""
    from backend.engines.embedding import hybrid

    monkeypatch.setenv("TLAB_MODEL_QA", str(qa_dir))
    build_paste()
    q = "What do honeybees make?"
    dense = search.search("s1", q, len(DOCS))["results"]
    texts = S.get_service().current("s1").corpus.texts_for_embedding()
    fused = hybrid.fuse(np.array([r["score"] for r in dense]), hybrid.Bm25(texts).scores(q)[[r["id"] for r in dense]])
    expected = [dense[i]["id"] for i in np.argsort(-fused, kind="stable")[:search.ASK_MAX_PASSAGES]]
    out = search.ask("s1", q, 10)
    assert [p["id"] for p in out["passages"]] == expected
    assert [p["rank"] for p in out["passages"]] == [1, 2, 3, 4, 5]
    assert all(p["dense"] == {r["id"]: r["score"] for r in dense}[p["id"]] for p in out["passages"])
    assert out["retrieval"]["method"] == "fused" and out["retrieval"]["candidates"] == len(DOCS)
    assert "BM25" in out["retrieval"]["line"] and "stays dense" in out["retrieval"]["line"]


def test_ask_on_a_large_corpus_scores_bm25_among_the_candidates_only(service, monkeypatch, qa_dir):
    """Above WHOLE_CORPUS_MAX passages BM25 is not built over the corpus (a cost no contract prices): the
    candidates are scored among themselves, and the line says so."""
    from backend.engines.embedding import hybrid
    from backend.search import retrieval

    monkeypatch.setenv("TLAB_MODEL_QA", str(qa_dir))
    monkeypatch.setattr(retrieval, "WHOLE_CORPUS_MAX", 3)
    monkeypatch.setattr(retrieval, "_BM25", {})
    build_paste()
    q = "What do honeybees make?"
    dense = search.search("s1", q, len(DOCS))["results"]
    texts = S.get_service().current("s1").corpus.texts_for_embedding()
    local = hybrid.Bm25([texts[r["id"]] for r in dense]).scores(q)
    fused = hybrid.fuse(np.array([r["score"] for r in dense]), local)
    out = search.ask("s1", q, 10)
    assert [p["id"] for p in out["passages"]] == [dense[i]["id"] for i in np.argsort(-fused, kind="stable")[:5]]
    assert retrieval._BM25 == {} and "among the 7 candidates" in out["retrieval"]["line"]


def test_ask_stays_dense_with_the_multilingual_embedder(service):
    """Cross-lingual questions share no word with the passages: with the multilingual embedder Ask keeps the
    dense order (and says why)."""
    from backend import hub
    from backend.search import retrieval
    from backend.search.embedders import Embedder

    build_paste()
    lm = hub.load("embedder")  # the tiny embedder that built the index, standing in for the multilingual one
    emb = Embedder(lm.model, lm.tokenizer, lm.checkpoint, choice="multilingual")
    got, how = retrieval.ask_passages(S.get_service(), "s1", "What do honeybees make?", 3, emb)
    assert got == S.get_service().search("s1", "What do honeybees make?", 3, emb)["results"]
    assert how["method"] == "dense" and "cross-lingual" in how["line"]


def test_ask_bad_inputs(service):
    build_paste()
    with pytest.raises(InputError, match="question is empty"):
        search.ask("s1", "  ", 3)
    with pytest.raises(InputError, match="k must be a whole number"):
        search.ask("s1", "bees?", "three")
    with pytest.raises(InputError, match="build one first"):
        search.ask("nobody", "bees?", 3)


# ----------------------------------------------------------------------------- compare
def test_compare_indexes_over_the_session_vectors(service):
    build_paste()
    calls = []
    rows = search.compare_indexes("s1", 5, progress=lambda f, d: calls.append(d))
    # 7 vectors: nlist = 1, so both nprobe values collapse to 1; pq_m = largest of 48.. dividing 32.
    assert [r["label"] for r in rows] == ["Flat", "SQ8", "HNSW M32 efS16", "HNSW M32 efS64",
                                          "HNSW M32 efS128", "IVF1 nprobe1", "IVF1-PQ32 nprobe1"]
    assert {r["index_type"] for r in rows} == set(search.INDEX_LABELS.values())
    assert rows[0]["recall_at_k"] == 1.0 and all(r["recall_k"] == 5 for r in rows)
    assert calls == [f"Measuring {r['label']}" for r in rows]
    with pytest.raises(InputError, match="k must be between 1 and 100, got 0"):
        search.compare_indexes("s1", 0)
    with pytest.raises(InputError, match="build one first"):
        search.compare_indexes("nobody", 5)


# ----------------------------------------------------------------------------- GPU tasks
def test_embedding_runs_in_chunks_and_reports_between_them(service, monkeypatch):
    monkeypatch.setattr(api, "EMBED_CHUNK", 3)
    calls = []
    build_paste(progress=lambda f, d: calls.append(d))
    assert [d for d in calls if d.startswith("Embedding passages")] == [
        "Embedding passages 3/7", "Embedding passages 6/7", "Embedding passages 7/7"]
    from backend import hub

    lm = hub.load("embedder")
    one_go = embed_texts(service.current("s1").corpus.texts_for_embedding(), lm.model, lm.tokenizer)
    np.testing.assert_allclose(service.current("s1").vectors, one_go, atol=1e-5)


def test_gpu_tasks_take_and_return_plain_values(service, monkeypatch, qa_dir):
    """ZeroGPU runs a GPU task in a forked worker: what goes in and out must pickle, and the
    sessions must stay in this process. Every model call here crosses a pickle boundary."""
    monkeypatch.setenv("TLAB_MODEL_QA", str(qa_dir))
    crossed = []

    def across_fork(fn):
        def call(*args):
            crossed.append(fn.__name__)
            return pickle.loads(pickle.dumps(fn(*pickle.loads(pickle.dumps(args)))))
        return call

    monkeypatch.setattr(api, "_embed_chunk", across_fork(api._embed_chunk))
    monkeypatch.setattr(api, "_read_passages", across_fork(api._read_passages))
    build_paste(progress=lambda f, d: None)
    assert crossed == ["_embed_chunk"]
    assert search.search("s1", "bees", 2)["results"][0]["rank"] == 1
    out = search.ask("s1", "What do bees do?", 2)
    assert crossed == ["_embed_chunk"] * 3 + ["_read_passages"]
    assert out["reader_method"] == "model" and len(out["cited"]) == 1


# ----------------------------------------------------------------------------- model-free helpers
def test_inspect_upload(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("Name,Body,x\na,b,c\n")
    assert search.inspect_upload(str(csv)) == {"table": True, "columns": ["Name", "Body", "x"],
                                               "text": "Body", "title": "Name"}
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"q": "a", "heading": "h"}\n')
    assert search.inspect_upload(str(jsonl)) == {"table": True, "columns": ["q", "heading"],
                                                 "text": "q", "title": "heading"}
    txt = tmp_path / "n.txt"
    txt.write_text("plain\nlines\n")
    none = {"table": False, "columns": [], "text": None, "title": None}
    assert search.inspect_upload(str(txt)) == none
    assert search.inspect_upload(None) == none
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"\x00\x01binary\x00" * 10)
    assert search.inspect_upload(str(binary)) is None


def test_load_corpus_needs_no_model(service, tmp_path):
    from backend import hub

    before = hub.get_hub().load_count
    f = tmp_path / "d.jsonl"
    f.write_text('{"body": "first doc", "t": "one"}\n{"body": "second doc", "t": "two"}\n')
    corpus, shared = search.load_corpus("upload", str(f), text_field=" body ", title_field="t")
    assert not shared and [(p.title, p.text) for p in corpus.passages] == [
        ("one", "first doc"), ("two", "second doc")]
    glossary, shared = search.load_corpus("glossary")
    assert shared and glossary.content_hash == load_glossary().content_hash
    assert hub.get_hub().load_count == before
