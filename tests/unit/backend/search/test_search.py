"""Unit tests for semantic search: parsing, chunking, index factory, recall, persistence,
atomic writes, session isolation. Tiny random BERT + the real MiniLM tokenizer."""

from __future__ import annotations

import json
import os
import time

import faiss
import numpy as np
import pytest

from backend.runtime.config import SearchLimits
from backend.engines.embedding.vectors import embed_texts
from backend.runtime.errors import InputError
from backend.search import corpora as C
from backend.search import index as si
from backend.search import reader
from backend.search.index import IndexSettings
from backend.search.reader import build_messages, overlap_citations, parse_citations
from backend.search.service import Embedder, SearchService, pca_2d
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer, tiny_bert, tiny_llama


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def tokenizer():
    return minilm_tokenizer()


@pytest.fixture(scope="module")
def tiny_model():
    return tiny_bert(seed=0)  # 32 dims: the shapes below depend on it


@pytest.fixture()
def embedder(tiny_model, tokenizer):
    return Embedder(tiny_model, tokenizer, "tiny-bert-test", {"checkpoint": "tiny"})


def clustered(n=2000, d=32, centers=20, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centers, d))
    x = c[rng.integers(0, centers, n)] + noise * rng.normal(size=(n, d))
    x = x.astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def make_corpus(words, name="c"):
    return C.documents_to_corpus(name, [("", w) for w in words])


# ------------------------------------------------------------------ embedding
def test_embed_texts_normalised_order_independent(tiny_model, tokenizer):
    texts = ["a short one", "a much longer sentence with many more words in it than the first",
             "mid length text here", "x"]
    e = embed_texts(texts, tiny_model, tokenizer, batch_size=2)
    assert e.dtype == np.float32 and e.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    # Batching and length sorting must not change any row: compare with one-at-a-time.
    for i, t in enumerate(texts):
        one = embed_texts([t], tiny_model, tokenizer, batch_size=1)[0]
        np.testing.assert_allclose(e[i], one, atol=1e-5)


def test_embed_texts_mean_pooling_ignores_padding(tiny_model, tokenizer):
    import torch
    text = "attention is all you need"
    enc = tokenizer([text], return_tensors="pt")
    with torch.inference_mode():
        h = tiny_model(**enc).last_hidden_state[0]
    ref = h.mean(0)
    ref = (ref / ref.norm()).numpy()
    got = embed_texts([text, text + " " + "word " * 40], tiny_model, tokenizer)[0]
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_embed_texts_progress_and_empty(tiny_model, tokenizer):
    calls = []
    embed_texts(["a", "b", "c"], tiny_model, tokenizer, batch_size=2,
                progress=lambda d, t: calls.append((d, t)))
    assert calls == [(2, 3), (3, 3)]
    assert embed_texts([], tiny_model, tokenizer).shape == (0, 32)


# ------------------------------------------------------------------ chunking
def test_chunk_text_overlap():
    words = [f"w{i}" for i in range(25)]
    chunks = C.chunk_text(" ".join(words), max_words=10, overlap=3)
    assert chunks[0].split() == words[:10]
    assert chunks[1].split()[:3] == words[7:10]  # 3 words shared with the previous chunk
    assert chunks[-1].split()[-1] == "w24"
    assert " ".join(chunks).split()[0] == "w0"
    covered = set(w for c in chunks for w in c.split())
    assert covered == set(words)


def test_chunk_text_short_and_bad_overlap():
    assert C.chunk_text("one two", 10, 3) == ["one two"]
    assert C.chunk_text("   ", 10, 3) == []
    with pytest.raises(InputError, match="Overlap"):
        C.chunk_text("a b c", 5, 5)


def test_long_document_split_into_titled_parts():
    doc = " ".join(f"w{i}" for i in range(300))
    c = C.documents_to_corpus("x", [("Big", doc), ("Small", "tiny doc")], max_words=120, overlap=30)
    titles = [p.title for p in c.passages]
    assert titles[0] == "Big (part 1/3)" and titles[-1] == "Small"
    assert any("Split long documents" in n for n in c.notes)


# ------------------------------------------------------------------ parsing: formats
def test_txt_lines_and_paragraphs():
    assert len(C.parse_txt("one\ntwo\nthree\n")) == 3
    paras = C.parse_txt("first para\nstill first\n\nsecond para\n \nthird")
    assert [t for _, t in paras] == ["first para\nstill first", "second para", "third"]


def test_txt_upload():
    c = C.corpus_from_bytes(b"alpha beta\ngamma delta\nepsilon\n", "notes.txt")
    assert [p.text for p in c.passages] == ["alpha beta", "gamma delta", "epsilon"]
    assert c.passages[0].title == "doc 1"


def test_csv_text_and_title_columns():
    data = b'title,body,x\nOne,"first, text",1\nTwo,second text,2\n'
    c = C.corpus_from_bytes(data, "t.csv", C.UploadOptions(text_field="body", title_field="title"))
    assert [(p.title, p.text) for p in c.passages] == [("One", "first, text"), ("Two", "second text")]


def test_tsv():
    data = "name\ttext\nA\tthe first row\nB\tthe second row\n".encode()
    c = C.corpus_from_bytes(data, "t.tsv", C.UploadOptions(text_field="text", title_field="name"))
    assert c.passages[1].title == "B"


def test_csv_missing_column_lists_columns():
    with pytest.raises(InputError, match=r"no column 'content'.*title, body"):
        C.corpus_from_bytes(b"title,body\na,b\nc,d\n", "t.csv", C.UploadOptions(text_field="content"))
    with pytest.raises(InputError, match="title column"):
        C.corpus_from_bytes(b"title,body\na,b\nc,d\n", "t.csv",
                            C.UploadOptions(text_field="body", title_field="nope"))
    with pytest.raises(InputError, match="Choose the text column"):
        C.corpus_from_bytes(b"title,body\na,b\nc,d\n", "t.csv")


def test_jsonl_field_and_title():
    data = b'{"q": "first doc", "t": "T1"}\n{"q": "second doc", "t": "T2"}\n'
    c = C.corpus_from_bytes(data, "d.jsonl", C.UploadOptions(text_field="q", title_field="t"))
    assert [(p.title, p.text) for p in c.passages] == [("T1", "first doc"), ("T2", "second doc")]


def test_jsonl_broken_lines_rejected_with_line_numbers():
    data = b'{"text": "good one"}\n{broken\n{"text": "good two"}\nnot json\n{"text": "good three"}\n'
    with pytest.raises(InputError) as e:
        C.corpus_from_bytes(data, "d.jsonl")
    assert "line 2, 4" in str(e.value) and "keep the good" in str(e.value)


def test_jsonl_keep_good_lines_when_agreed():
    data = b'{"text": "good one"}\n{broken\n{"text": "good two"}\n{"other": 1}\n'
    c = C.corpus_from_bytes(data, "d.jsonl", C.UploadOptions(keep_good_lines=True))
    assert [p.text for p in c.passages] == ["good one", "good two"]
    assert any("line 2" in n for n in c.notes) and any("line 4" in n for n in c.notes)


def test_jsonl_field_missing_everywhere():
    with pytest.raises(InputError, match="text field 'body'"):
        C.corpus_from_bytes(b'{"text": "a"}\n{"text": "b"}\n', "d.jsonl",
                            C.UploadOptions(text_field="body"))


# ------------------------------------------------------------------ parsing: bad inputs
@pytest.mark.parametrize("data,name,match", [
    (b"", "e.txt", "empty"),
    (b"\n\n   \n", "e.txt", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "img.txt", "binary"),
    ("caf\u00e9 au lait\nthe second".encode("latin-1"), "l1.txt", "not valid UTF-8"),
    (b"only one document here", "one.txt", "only one passage"),
    (b"same\nsame\nSAME\n", "dup.txt", "only one passage"),
    (b"a\nb\n", "doc.pdf", "unsupported file type"),
])
def test_bad_files(data, name, match):
    with pytest.raises(InputError, match=match):
        C.corpus_from_bytes(data, name)


def test_duplicates_dropped_with_note():
    c = C.corpus_from_bytes(b"alpha\nbeta\nalpha\nBeta\ngamma\n", "d.txt")
    assert [p.text for p in c.passages] == ["alpha", "beta", "gamma"]
    assert any("2 duplicate" in n for n in c.notes)


def test_size_limits():
    with pytest.raises(InputError, match="over the limit"):
        C.corpus_from_bytes(b"x" * 2000 + b"\ny\n", "big.txt", limits=SearchLimits(max_bytes=1000))
    with pytest.raises(InputError, match="more than 3 passages"):
        C.corpus_from_bytes(b"a\nb\nc\nd\ne\n", "many.txt", limits=SearchLimits(max_passages=3))
    with pytest.raises(InputError, match="over the limit"):
        C.corpus_from_paste("y " * 600, limits=SearchLimits(max_bytes=1000))


def test_paste_and_file(tmp_path):
    assert len(C.corpus_from_paste("one\ntwo")) == 2
    with pytest.raises(InputError, match="empty"):
        C.corpus_from_paste("   ")
    p = tmp_path / "x.jsonl"
    p.write_text('{"text": "a"}\n{"text": "b"}\n')
    assert len(C.corpus_from_file(str(p))) == 2


def test_content_hash_depends_on_content_only():
    a = make_corpus(["one", "two"], "a")
    b = make_corpus(["one", "two"], "b")
    c = make_corpus(["one", "three"])
    assert a.content_hash == b.content_hash != c.content_hash


# ------------------------------------------------------------------ index factory
@pytest.mark.parametrize("kind", si.INDEX_KINDS)
def test_index_factory_each_type_inner_product(kind):
    x = clustered(n=3000, d=32)
    s = IndexSettings(kind=kind, nlist=16, nprobe=16, pq_m=8, pq_bits=6, ef_search=64)
    b = si.build_index(x, s)
    assert b.index.ntotal == 3000 and b.index.metric_type == faiss.METRIC_INNER_PRODUCT
    scores, ids = si.search(b.index, x[:5], 5)
    # Similarities, best first: descending, and each vector finds itself first (not for PQ).
    assert np.all(np.diff(scores, axis=1) <= 1e-5)
    if kind != "ivf_pq":
        assert ids[:, 0].tolist() == [0, 1, 2, 3, 4]
        # SQ8 stores each dimension in one byte: its scores carry that rounding (~1e-3).
        np.testing.assert_allclose(scores[:, 0], 1.0, atol=1e-2 if kind == "sq8" else 1e-4)


# ------------------------------------------------------------------ auto index choice, SQ8, one thread
def test_choose_index_threshold_and_explanation():
    # 8 M floats is the line: 20,833 x 384 = 7,999,872 stays exact, 20,834 x 384 goes to HNSW.
    assert si.AUTO_FLAT_MAX_FLOATS == 8_000_000
    kind, why = si.choose_index(20_833, 384)
    assert kind == "flat"
    assert why == ("auto -> Flat (exact): 20,833 vectors x 384 dims = 8.0 M floats <= 8 M, so one "
                   "exact query costs ~0.80 ms on one thread.")
    kind, why = si.choose_index(20_834, 384)
    assert kind == "hnsw" and why.startswith("auto -> HNSW (M=32, efSearch=96): 20,834 vectors x 384 dims")
    assert "> 8 M" in why and "recall@10" in why
    assert si.choose_index(100_000, 384)[0] == "hnsw"
    assert si.choose_index(3_364, 384)[0] == "flat" and si.choose_index(1, 1)[0] == "flat"


def test_resolve_auto_sets_the_chosen_knobs_and_keeps_explicit_choices():
    s, choice = si.resolve_auto(IndexSettings("auto", ef_search=16), 100_000, 384)
    assert (s.kind, s.hnsw_m, s.ef_construction, s.ef_search) == ("hnsw", 32, 40, 96)
    assert choice["auto"] is True and choice["kind"] == "hnsw"
    s, choice = si.resolve_auto(IndexSettings("auto"), 300, 384)
    assert s.kind == "flat" and choice == {"auto": True, "kind": "flat", "reason": si.choose_index(300, 384)[1]}
    s, choice = si.resolve_auto(IndexSettings("ivf_flat"), 100_000, 384)
    assert s.kind == "ivf_flat" and choice == {"auto": False, "kind": "ivf_flat",
                                               "reason": "IVF-Flat: chosen in the settings."}
    assert IndexSettings().kind == "auto" and IndexSettings("AUTO").validate().kind == "auto"


def test_build_index_auto_small_is_exact_flat_and_says_why():
    x = clustered(n=500, d=32)
    b = si.build_index(x, IndexSettings())
    assert isinstance(b.index, faiss.IndexFlatIP) and b.settings.kind == "flat"
    assert b.index_choice["auto"] and b.index_choice["reason"].startswith("auto -> Flat (exact): 500 vectors x 32 dims")
    assert si.measure(b, x)["index_choice"] == b.index_choice


def test_sq8_is_a_quarter_of_flat_and_near_exact():
    x = clustered(n=3000, d=32, noise=0.3)
    flat = si.build_index(x, IndexSettings("flat"))
    sq8 = si.build_index(x, IndexSettings("sq8"))
    assert isinstance(sq8.index, faiss.IndexScalarQuantizer)
    assert sq8.index.sa_code_size() == 32  # one byte per dimension (Flat: 4)
    codes, floats = sq8.index.ntotal * sq8.index.sa_code_size(), flat.index.ntotal * 32 * 4
    assert codes * 4 == floats
    assert si.index_bytes(sq8.index) < si.index_bytes(flat.index) / 3.5
    q = x[:200] + 0.05 * np.random.default_rng(1).normal(size=(200, 32)).astype(np.float32)
    exact = si.exact_neighbours(x, q, 10)
    approx = si.search(sq8.index, q, 10)[1]
    assert si.recall_at_k(approx, exact, 10) >= 0.94  # 0.946 here: only near-ties swap places
    assert si.recall_at_k(approx, exact, 1) >= 0.99  # 0.995: one near-tie at rank 1 in 200
    assert si.recall_at_k(si.search(flat.index, q, 10)[1], exact, 10) == 1.0


def test_single_query_runs_on_one_thread_and_restores(monkeypatch):
    x = clustered(n=300, d=32)
    seen = []

    class Spy(faiss.IndexFlatIP):
        def search(self, q, k, *a, **kw):
            seen.append((len(q), faiss.omp_get_max_threads()))
            return super().search(q, k, *a, **kw)

    index = Spy(32)
    index.add(x)
    faiss.omp_set_num_threads(2)
    si.search(index, x[0], 3)
    si.search(index, x[:4], 3)
    assert seen == [(1, 1), (4, 2)] and faiss.omp_get_max_threads() == 2


def test_factory_types_are_the_right_faiss_classes():
    x = clustered(n=2000, d=32)
    assert isinstance(si.build_index(x, IndexSettings("flat")).index, faiss.IndexFlatIP)
    h = si.build_index(x, IndexSettings("hnsw", hnsw_m=8, ef_construction=20, ef_search=12)).index
    assert isinstance(h, faiss.IndexHNSWFlat) and h.hnsw.efSearch == 12
    ivf = si.build_index(x, IndexSettings("ivf_flat", nlist=10, nprobe=3)).index
    assert isinstance(ivf, faiss.IndexIVFFlat) and ivf.nlist == 10 and ivf.nprobe == 3
    pq = si.build_index(x, IndexSettings("ivf_pq", nlist=10, pq_m=4, pq_bits=8)).index
    assert isinstance(pq, faiss.IndexIVFPQ) and pq.pq.M == 4


def test_ivf_with_fewer_vectors_than_nlist_adapts_and_says_so():
    x = clustered(n=50, d=32)
    b = si.build_index(x, IndexSettings("ivf_flat", nlist=100, nprobe=8))
    assert b.settings.nlist < 50 and b.index.nlist == b.settings.nlist
    assert any("too few for nlist=100" in n for n in b.notes)
    assert b.index.ntotal == 50


def test_ivf_pq_adapts_pq_m_and_bits():
    x = clustered(n=100, d=30)
    b = si.build_index(x, IndexSettings("ivf_pq", nlist=4, pq_m=16, pq_bits=8))
    assert 30 % b.settings.pq_m == 0 and (1 << b.settings.pq_bits) <= 100
    assert any("pq_m" in n for n in b.notes) and any("pq_bits" in n for n in b.notes)


def test_settings_validation():
    with pytest.raises(InputError, match="Unknown index type"):
        IndexSettings(kind="annoy").validate()
    with pytest.raises(InputError, match="hnsw_m"):
        IndexSettings(kind="hnsw", hnsw_m=0).validate()
    assert IndexSettings(kind="IVF-PQ").validate().kind == "ivf_pq"
    # Query-time knobs are not part of the build key.
    assert IndexSettings("hnsw", ef_search=10).key() == IndexSettings("hnsw", ef_search=99).key()
    assert IndexSettings("hnsw", hnsw_m=8).key() != IndexSettings("hnsw", hnsw_m=16).key()


# ------------------------------------------------------------------ recall
def test_recall_at_k_computation():
    exact = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    approx = np.array([[1, 2, 9, 4], [8, 7, 6, 5]])
    assert si.recall_at_k(approx, exact, 4) == pytest.approx((3 / 4 + 1) / 2)
    assert si.recall_at_k(approx, exact, 2) == pytest.approx((1 + 0) / 2)
    assert si.recall_at_k(np.array([[1, -1]]), np.array([[1, 2]]), 2) == pytest.approx(0.5)


def test_measure_exact_is_perfect_and_low_nprobe_is_not():
    x = clustered(n=4000, d=32, centers=50, noise=0.3)
    flat = si.measure(si.build_index(x, IndexSettings("flat")), x)
    assert flat["recall_at_k"] == 1.0 and flat["count"] == 4000 and flat["dims"] == 32
    assert flat["memory_bytes"] >= 4000 * 32 * 4
    ivf = si.measure(si.build_index(x, IndexSettings("ivf_flat", nlist=64, nprobe=1)), x)
    assert ivf["recall_at_k"] < 1.0
    pq = si.measure(si.build_index(x, IndexSettings("ivf_pq", nlist=16, pq_m=4)), x)
    assert pq["memory_bytes"] < flat["memory_bytes"] / 2


# ------------------------------------------------------------------ persistence
def test_index_round_trip(tmp_path):
    x = clustered(n=1000, d=32)
    b = si.build_index(x, IndexSettings("hnsw", hnsw_m=8))
    path = str(tmp_path / "i.faiss")
    si.save_index(b.index, path)
    again = si.load_index(path)
    assert again.ntotal == 1000
    np.testing.assert_array_equal(again.search(x[:10], 5)[1], b.index.search(x[:10], 5)[1])
    si.save_vectors(x, str(tmp_path / "v.npy"))
    np.testing.assert_array_equal(si.load_vectors(str(tmp_path / "v.npy")), x)


def test_atomic_write_crash_leaves_old_index_usable(tmp_path, monkeypatch):
    x = clustered(n=500, d=16)
    path = str(tmp_path / "i.faiss")
    si.save_index(si.build_index(x, IndexSettings("flat")).index, path)
    before = open(path, "rb").read()

    real_fdopen = os.fdopen

    class Crashing:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, data):
            self.f.write(data[: len(data) // 2])  # half the bytes reach the disk, then "crash"
            raise OSError("disk full (simulated crash mid-write)")

    monkeypatch.setattr(si.os, "fdopen", lambda fd, mode: Crashing(real_fdopen(fd, mode)))
    bigger = si.build_index(clustered(n=900, d=16), IndexSettings("flat")).index
    with pytest.raises(OSError, match="simulated"):
        si.save_index(bigger, path)
    monkeypatch.undo()
    assert open(path, "rb").read() == before
    assert si.load_index(path).ntotal == 500
    assert [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")] == []  # no litter


# ------------------------------------------------------------------ service
def test_service_build_search_and_cache_reuse(tmp_path, embedder):
    svc = SearchService(tmp_path)
    corpus = make_corpus([f"document number {i} about topic {i % 7}" for i in range(60)])
    stats = svc.build("s1", corpus, IndexSettings("flat"), embedder, shared=True)
    assert stats["count"] == 60 and stats["dims"] == 32 and stats["recall_at_k"] == 1.0
    assert not stats["embeddings_from_cache"] and not stats["index_from_cache"]
    res = svc.search("s1", corpus.texts_for_embedding()[3], 5, embedder)
    assert res["results"][0]["id"] == 3 and res["results"][0]["score"] == pytest.approx(1.0, abs=1e-3)
    assert [r["rank"] for r in res["results"]] == [1, 2, 3, 4, 5]
    json.dumps({k: v for k, v in res.items() if not k.startswith("_")})
    # A new service (a restart) on the same cache dir reuses embeddings and index.
    svc2 = SearchService(tmp_path)
    stats2 = svc2.build("s9", corpus, IndexSettings("flat"), embedder, shared=True)
    assert stats2["embeddings_from_cache"] and stats2["index_from_cache"]
    assert svc2.search("s9", corpus.texts_for_embedding()[3], 1, embedder)["results"][0]["id"] == 3


def test_service_private_corpus_never_touches_the_disk(tmp_path, embedder):
    """A private (uploaded) corpus lives in its session only: no file, and no cache hit that
    would tell a second user the same content was uploaded before."""
    svc = SearchService(tmp_path)
    corpus = make_corpus([f"private note {i}" for i in range(30)])
    a = svc.build("alice", corpus, IndexSettings("hnsw", hnsw_m=8), embedder)
    b = svc.build("bob", corpus, IndexSettings("hnsw", hnsw_m=8), embedder)
    assert not a["embeddings_from_cache"] and not b["embeddings_from_cache"] and not b["index_from_cache"]
    assert [f for _, _, files in os.walk(tmp_path) for f in files] == []
    query = corpus.texts_for_embedding()[3]
    assert svc.search("bob", query, 1, embedder)["results"][0]["id"] == 3
    svc.drop_session("alice")
    with pytest.raises(InputError, match="build one first"):
        svc.search("alice", query, 1, embedder)


def test_service_cleans_stale_temp_files_at_start(tmp_path):
    folder = tmp_path / "search" / "emb"
    folder.mkdir(parents=True)
    stale, fresh, kept = folder / ".tmp-abc", folder / ".tmp-now", folder / "x.npy"
    for p in (stale, fresh, kept):
        p.write_bytes(b"x")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(kept, (old, old))
    SearchService(tmp_path)
    assert not stale.exists() and fresh.exists() and kept.exists()


def test_service_corrupt_cache_is_rebuilt(tmp_path, embedder):
    svc = SearchService(tmp_path)
    corpus = make_corpus([f"passage {i}" for i in range(20)])
    svc.build("s", corpus, IndexSettings("hnsw", hnsw_m=8), embedder, shared=True)
    for root, _, files in os.walk(tmp_path):
        for f in files:
            if f.endswith(".faiss"):
                with open(os.path.join(root, f), "wb") as fh:
                    fh.write(b"garbage")
    stats = SearchService(tmp_path).build("s", corpus, IndexSettings("hnsw", hnsw_m=8), embedder, shared=True)
    assert not stats["index_from_cache"] and any("rebuilt" in n for n in stats["notes"])


def test_service_query_knobs_do_not_rebuild(tmp_path, embedder):
    svc = SearchService(tmp_path)
    corpus = make_corpus([f"text {i} of the corpus" for i in range(400)])
    a = svc.build("s", corpus, IndexSettings("ivf_flat", nlist=8, nprobe=1), embedder)
    first = svc.current("s")
    b = svc.build("s", corpus, IndexSettings("ivf_flat", nlist=8, nprobe=8), embedder)
    assert svc.current("s") is first and first.built.index.nlist == 8
    assert b["settings"]["nprobe"] == 8 and a["settings"]["nprobe"] == 1
    assert b["recall_at_k"] == 1.0  # nprobe == nlist: every list searched, exact


def test_service_search_bad_inputs(tmp_path, embedder):
    svc = SearchService(tmp_path)
    with pytest.raises(InputError, match="build one first"):
        svc.search("s", "query", 3, embedder)
    corpus = make_corpus(["one thing", "another thing", "a third thing"])
    svc.build("s", corpus, IndexSettings("flat"), embedder)
    with pytest.raises(InputError, match="empty"):
        svc.search("s", "   ", 3, embedder)
    with pytest.raises(InputError, match="characters long"):
        svc.search("s", "word " * 1000, 3, embedder)
    with pytest.raises(InputError, match="at least 1"):
        svc.search("s", "thing", 0, embedder)
    res = svc.search("s", "thing", 10, embedder)
    assert len(res["results"]) == 3 and "larger than the corpus" in res["notes"][0]


def test_session_isolation(tmp_path, embedder):
    svc = SearchService(tmp_path)
    alice = make_corpus(["alice secret alpha", "alice secret beta", "alice secret gamma"])
    bob = make_corpus(["bob private one", "bob private two", "bob private three"])
    svc.build("alice", alice, IndexSettings("flat"), embedder)
    svc.build("bob", bob, IndexSettings("flat"), embedder)
    for who, other in (("alice", "bob"), ("bob", "alice")):
        res = svc.search(who, f"{other} private secret", 3, embedder)
        assert all(r["text"].startswith(who) for r in res["results"])
        m = svc.map_data(who)
        assert all(t.startswith("doc") for t in m["titles"]) and m["total_points"] == 3
    with pytest.raises(InputError, match="build one first"):
        svc.search("carol", "alice secret", 3, embedder)
    assert svc.current("alice").corpus is alice and svc.current("bob").corpus is bob


def test_builtin_shared_once_across_sessions(tmp_path, embedder, monkeypatch):
    svc = SearchService(tmp_path, persist=False)
    corpus = make_corpus([f"shared passage {i}" for i in range(30)])
    calls = []
    real = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda t, progress=None: calls.append(len(t)) or real(t, progress))
    svc.build("a", corpus, IndexSettings("flat"), embedder, shared=True)
    svc.build("b", corpus, IndexSettings("flat"), embedder, shared=True)
    assert calls == [30]  # embedded once for both sessions
    assert svc.current("a") is svc.current("b")
    # A private build of the same content is not the shared entry.
    svc.build("c", corpus, IndexSettings("flat"), embedder)
    assert svc.current("c") is not svc.current("a")


def test_idle_eviction(tmp_path, embedder):
    svc = SearchService(tmp_path, idle_s=100, max_sessions=2, persist=False)
    corpus = make_corpus(["x one", "x two"])
    for s in ("s1", "s2"):
        svc.build(s, corpus, IndexSettings("flat"), embedder)
    import time
    gone = svc.evict_idle(now=time.monotonic() + 1000)
    assert set(gone) == {"s1", "s2"} and svc.session_count() == 0
    for s in ("s1", "s2", "s3"):
        svc.build(s, corpus, IndexSettings("flat"), embedder)
    assert svc.session_count() == 2 and svc._sessions.peek("s1") is None


def test_map_data_pca_and_downsampling(tmp_path, embedder):
    svc = SearchService(tmp_path, persist=False)
    corpus = make_corpus([f"map passage {i} " + "w" * (i % 5) for i in range(40)])
    svc.build("s", corpus, IndexSettings("flat"), embedder)
    res = svc.search("s", "map passage 3", 3, embedder)
    ids = [r["id"] for r in res["results"]]
    m = svc.map_data("s", res["_query_vector"], ids, max_points=10)
    assert m["shown_points"] == 10 and m["downsampled"] and m["total_points"] == 40
    assert [n["id"] for n in m["neighbours"]] == ids and m["query"] is not None
    json.dumps(m)


def test_pca_2d_matches_numpy_projection():
    x = clustered(n=300, d=16)
    p = pca_2d(x)
    assert p["coords"].shape == (300, 2)
    c = x - x.mean(0)
    cov = np.cov(c, rowvar=False)
    vals, vecs = np.linalg.eigh(cov)
    top = vecs[:, ::-1][:, :2]
    np.testing.assert_allclose(np.abs(p["coords"]), np.abs(c @ top), atol=1e-3)
    assert p["explained"][0] >= p["explained"][1]


# ------------------------------------------------------------------ reader helpers
def test_reader_prompt_and_citations():
    ps = [{"title": "A", "text": "alpha"}, {"title": "B", "text": "beta"}]
    msg = build_messages("what?", ps)[0]["content"]
    assert "[1] A: alpha" in msg and "[2] B: beta" in msg and "Question: what?" in msg
    assert parse_citations("Yes [2], see also [1, 2] and [7].", 2) == [2, 1]
    assert parse_citations("no citations", 3) == []


def test_private_memory_budget_evicts_oldest_sessions(tmp_path, embedder):
    corpus = make_corpus([f"budget passage {i}" for i in range(10)])
    one = 10 * 32 * 4 * 2  # vectors + index, as the service estimates it
    svc = SearchService(tmp_path, persist=False, max_private_bytes=2 * one)
    for s in ("s1", "s2", "s3"):
        svc.build(s, corpus, IndexSettings("flat"), embedder)
    assert svc._sessions.peek("s1") is None and svc.current("s3") is not None
    with pytest.raises(InputError, match="build one first"):
        svc.search("s1", "budget", 1, embedder)


def test_overlap_citations_when_the_reader_cites_nothing():
    ps = [{"title": "Feed-forward", "text": "two linear layers with GELU"},
          {"title": "DistilBERT", "text": "DistilBERT is BERT distilled to 6 layers"},
          {"title": "Sampling", "text": "top-p keeps probable tokens"}]
    assert overlap_citations("DistilBERT has 6 layers.", ps)[0] == 2
    assert overlap_citations("something unrelated entirely", ps) == []


def test_generative_reader_with_tiny_llama():
    """The decoder path end to end on a tiny random llama: greedy, so the same every run.

    Random weights never write "[n]" nor share two content words with the passage, so the
    reader falls back to word overlap and finds nothing to cite: exactly that is reported."""
    tok = smollm2_tokenizer()
    model = tiny_llama(seed=0)
    passages = [{"title": "A", "text": "alpha"}]
    out = reader.read(model, tok, "instruct-fallback", "what?", passages)
    again = reader.read(model, tok, "instruct-fallback", "what?", passages)
    assert out == again
    prompt = tok.apply_chat_template(build_messages("what?", passages), tokenize=False,
                                     add_generation_prompt=True)
    assert out["prompt_tokens"] == len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert out["answer"] and out["reader_method"] == "instruct-fallback"
    assert out["cited"] == []
    assert out["citations_from"] == "word overlap (the reader cited no passage)"


def _reply(text):
    return lambda model, tokenizer, messages, max_new_tokens, **kw: {
        "text": text, "prompt_tokens": 7, "new_tokens": 3, "mean_logprob": -1.0, "finish_reason": "eos",
        "warnings": []}


PASSAGES = [{"title": "Feed-forward", "text": "two linear layers with GELU"},
            {"title": "DistilBERT", "text": "DistilBERT is BERT distilled to 6 layers"}]


def test_generative_reader_keeps_the_citations_it_was_given(monkeypatch):
    monkeypatch.setattr(reader, "chat_generate", _reply("Six layers [2], not [9]."))
    out = reader.generative_answer(None, None, "How many layers?", PASSAGES)
    assert out == {"answer": "Six layers [2], not [9].", "cited": [2], "citations_from": "reader",
                   "reader_method": "instruct-fallback", "prompt_tokens": 7, "finish_reason": "eos",
                   "notices": []}


def test_generative_reader_attributes_by_overlap_when_it_cites_nothing(monkeypatch):
    monkeypatch.setattr(reader, "chat_generate", _reply("DistilBERT has 6 layers."))
    out = reader.generative_answer(None, None, "How many layers?", PASSAGES)
    assert out["cited"] == [2]
    assert out["citations_from"] == "word overlap (the reader cited no passage)"


def test_generative_reader_refuses_a_prompt_past_the_window():
    """chat_generate's context-window check now guards the reader too."""
    tok = smollm2_tokenizer()
    model = tiny_llama(seed=0, max_position_embeddings=64)
    with pytest.raises(InputError, match="token window"):
        reader.read(model, tok, "instruct-fallback", "what?", [{"title": "A", "text": "alpha"}])
