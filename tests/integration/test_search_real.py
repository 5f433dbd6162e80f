"""Semantic search with the real embedder (all-MiniLM-L6-v2 under the `local` profile)."""

from __future__ import annotations

import numpy as np
import pytest

from backend import search
from backend.runtime import config
from backend.search import corpora as C
from backend.search import service as S
from backend.search.api import load_embedder
from backend.search.index import IndexSettings
from backend.search.service import Embedder, SearchService

# Passages and paraphrased queries that share few words with them.
PAIRS = [
    ("The cat slept on the warm windowsill all afternoon.", "a kitten napping in the sun by the window"),
    ("Interest rates were raised by the central bank to fight inflation.", "monetary authority hikes borrowing costs because prices keep climbing"),
    ("The striker scored twice in the second half to win the match.", "football forward nets two goals after the break"),
    ("Heavy rain flooded the streets and closed several schools.", "downpour causes flooding and school closures"),
    ("She baked a chocolate cake for her grandmother's birthday.", "a sweet dessert made for granny's birthday party"),
    ("The new phone has a larger battery and a brighter screen.", "latest smartphone lasts longer and its display is more vivid"),
    ("Volcanic ash forced airlines to cancel hundreds of flights.", "eruption grounds planes across the region"),
    ("The museum opened an exhibition of ancient Egyptian artifacts.", "a gallery now shows relics from the pharaohs"),
    ("Doctors recommend thirty minutes of exercise every day.", "physicians advise working out for half an hour daily"),
    ("The company reported record profits this quarter.", "the firm earned more money than ever in the last three months"),
]

GLOSSARY_QUERIES = [
    ("How do I stop a model from producing the same phrase again and again?", {"No-repeat n-gram", "Repetition penalty"}),
    ("make a big network smaller by teaching a little one to copy it", {"Knowledge distillation"}),
    ("store weights in 8-bit integers to speed up CPU inference", {"Quantization", "Dynamic quantization"}),
    ("which tokenizer does BERT use?", {"WordPiece"}),
    ("hide future tokens so a decoder cannot cheat", {"Causal attention mask", "Decoder"}),
]


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


@pytest.fixture(scope="module")
def glossary_cache(tmp_path_factory):
    """One cache dir for the glossary tests: its embeddings are computed once."""
    return tmp_path_factory.mktemp("glossary-cache")


def test_embeddings_are_unit_and_meaningful(embedder):
    v = embedder.embed(["a dog runs in the park", "a puppy is running on the grass",
                        "quarterly tax filing deadline"])
    assert v.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf_flat"])
def test_paraphrase_finds_its_source_at_rank_1(tmp_path, embedder, kind):
    svc = SearchService(tmp_path)
    corpus = C.documents_to_corpus("pairs", [("", p) for p, _ in PAIRS])
    stats = svc.build("s", corpus, IndexSettings(kind, nlist=4, nprobe=4), embedder)
    assert stats["count"] == len(PAIRS) and stats["dims"] == 384
    for i, (passage, query) in enumerate(PAIRS):
        top = svc.search("s", query, 3, embedder)["results"]
        assert top[0]["text"] == passage, (query, top[0]["text"])


def test_glossary_answers_paraphrased_questions(glossary_cache, embedder):
    svc = SearchService(glossary_cache)
    corpus = C.load_glossary()
    assert len(corpus) >= 200
    svc.build("s", corpus, IndexSettings("hnsw"), embedder, shared=True)
    for query, expected in GLOSSARY_QUERIES:
        top = [r["title"] for r in svc.search("s", query, 3, embedder)["results"]]
        assert expected & set(top), (query, top)


def test_docstring_corpus_builds_and_answers(tmp_path, embedder, monkeypatch):
    from backend.search import docstrings as D
    # Bounded for test speed; faiss comes first in the library order.
    corpus = D.docstring_corpus(str(tmp_path / "corpora"), max_entries=400, max_seconds=20)
    assert len(corpus) >= 300
    libs = {m for m, _, _ in D.LIBRARIES}
    assert all(p.title.split(".")[0] in libs for p in corpus.passages)  # qualified names
    assert sum("." in p.title for p in corpus.passages) > 0.9 * len(corpus)
    svc = SearchService(tmp_path)
    stats = svc.build("s", corpus, IndexSettings("flat"), embedder, shared=True)
    assert stats["count"] == len(corpus)
    for query, expected in (("turn an index into an array of bytes", "faiss.serialize_index"),
                            ("cluster vectors into groups and keep the centroids", "faiss.extra_wrappers.Kmeans")):
        top = [r["title"] for r in svc.search("s", query, 5, embedder)["results"]]
        assert expected in top, (query, top)
    # Cached: a second call reads the JSONL instead of walking the sources again.
    monkeypatch.setattr(D, "collect_docstrings", lambda *a, **k: pytest.fail("not cached"))
    again = D.docstring_corpus(str(tmp_path / "corpora"), max_entries=400, max_seconds=20)
    assert again.content_hash == corpus.content_hash


def test_restart_reuses_persisted_index(tmp_path, embedder, monkeypatch):
    """A shared (built-in) corpus persists across restarts; a private one never touches disk
    (tests/fuzz/test_public_mode.py checks that side)."""
    corpus = C.documents_to_corpus("pairs", [("", p) for p, _ in PAIRS])
    SearchService(tmp_path).build("s", corpus, IndexSettings("hnsw"), embedder, shared=True)
    monkeypatch.setattr(embedder, "embed", lambda texts, progress=None:
                        pytest.fail("re-embedded") if len(texts) > 1 else Embedder.embed(embedder, texts))
    svc = SearchService(tmp_path)
    stats = svc.build("s", corpus, IndexSettings("hnsw"), embedder, shared=True)
    assert stats["embeddings_from_cache"] and stats["index_from_cache"]


# Greedy decoding on CPU (float32) is deterministic: SmolLM2 never writes "[n]"; the word-overlap fallback
# attributes the top-p reply to passages 3 and 1, and the DistilBERT reply (which invents a paper title,
# "DistilBERT: A New Approach to Language Understanding", over the passages Ask's dense + BM25 retrieval gives
# it: DistilBERT, DistilBERT (model), Knowledge distillation) to passages 2 and 1.
ASK_CASES = [
    ("How many layers does DistilBERT have?", "DistilBERT", None, [2, 1]),
    ("What does top-p sampling keep?", "Top-p sampling", None, [3, 1]),
]


@pytest.mark.parametrize("question,top_title,answer,cited", ASK_CASES)
def test_ask_the_corpus_with_the_instruct_reader(glossary_cache, monkeypatch, question, top_title,
                                                 answer, cited):
    """The role-level path the tab calls: embedder retrieves, the `qa` role (instruct) reads."""
    monkeypatch.setattr(S.SERVICE, "_value", SearchService(glossary_cache))
    search.build_index("s", "glossary")
    out = search.ask("s", question, 3)
    assert [p["title"] for p in out["passages"]][0] == top_title
    assert out["reader_method"] == "instruct-fallback" and out["model"]["role"] in ("qa", "decoder")
    if config.LOCAL["qa"].method == config.METHOD_FINETUNED:  # the reader trained here answers beside it
        ex = out["extractive"]
        assert ex["model"]["method"] == config.METHOD_FINETUNED  # it reads the first `read` of the 3 retrieved
        assert len(ex["per_passage"]) == ex["read"] and 1 <= ex["read"] <= 3
        if not ex["no_answer"]:
            assert out["passages"][ex["passage"] - 1]["text"][ex["start"]:ex["end"]] == ex["answer"]
    assert out["retriever_model"]["role"] == "embedder"
    assert out["answer"] and (answer is None or out["answer"] == answer)
    assert out["cited"] == cited
    assert out["citations_from"] == "word overlap (the reader cited no passage)"
    # the generated answer is checked against the question and the passages it was given
    flagged = out["support"]["unsupported"]
    assert all(out["answer"][i["start"]:i["end"]] == i["text"] for i in flagged)
    if top_title == "DistilBERT":  # the invented title is flagged as a name no retrieved passage holds
        assert ("New Approach", "name") in [(i["text"], i["kind"]) for i in flagged]
        assert [p["title"] for p in out["passages"]] == ["DistilBERT", "DistilBERT (model)", "Knowledge distillation"]
        assert out["retrieval"]["method"] == "fused" and out["passages"][2]["dense_rank"] > 3  # BM25 lifted it
