"""The search's choice of embedder (backend.search.embedders): e5's "query: " / "passage: "
prefixes reach the model and MiniLM's texts stay as they are; each checkpoint keys its own cache
entry, in memory and on disk; the API embeds a query with the model that built the index."""

from __future__ import annotations

import numpy as np
import pytest

from backend import search
from backend.runtime.errors import InputError
from backend.search import corpora as C
from backend.search import service as S
from backend.search.embedders import E5_PREFIXES, Embedder, prefixes_for
from backend.search.index import IndexSettings
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

E5 = "intfloat/multilingual-e5-small"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


class Recording(Embedder):
    """Records every text it is asked to embed; vectors from the text's bytes (deterministic)."""

    def embed(self, texts, progress=None):
        self.seen = getattr(self, "seen", []) + list(texts)
        rng = [np.random.default_rng(sum(t.encode())) for t in texts]
        v = np.stack([r.normal(size=32) for r in rng]).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def recording(name: str, choice: str) -> Recording:
    return Recording(tiny_bert(seed=0), minilm_tokenizer(), name, {"checkpoint": name}, choice=choice)


@pytest.mark.parametrize("checkpoint,expected", [
    (E5, E5_PREFIXES), ("intfloat/e5-small-v2", E5_PREFIXES), ("/cache/e5-base", E5_PREFIXES),
    (MINILM, ("", "")), ("xlm-roberta-base", ("", "")), ("some/be5t-model", ("", "")),
])
def test_prefixes_follow_the_checkpoint(checkpoint, expected):
    assert prefixes_for(checkpoint) == expected


def test_e5_prefixes_reach_the_model_and_minilm_texts_stay_as_they_are(tmp_path):
    svc = S.SearchService(tmp_path)
    corpus = C.documents_to_corpus("c", [("", "Tides follow the pull of the moon."),
                                         ("", "Owls hunt at night with silent feathers.")])
    e5, mini = recording(E5, "multilingual"), recording(MINILM, "minilm")
    svc.build("a", corpus, IndexSettings("flat"), e5, shared=True)
    svc.search("a", "Wann jagen Eulen?", 1, e5)
    assert e5.seen == ["passage: " + t for t in corpus.texts_for_embedding()] + ["query: Wann jagen Eulen?"]
    svc.build("b", corpus, IndexSettings("flat"), mini, shared=True)
    svc.search("b", "When do owls hunt?", 1, mini)
    assert mini.seen == corpus.texts_for_embedding() + ["When do owls hunt?"]


def test_the_two_embedders_never_share_a_cache_entry(tmp_path):
    svc = S.SearchService(tmp_path)
    corpus = C.documents_to_corpus("c", [("", "Tides follow the pull of the moon."),
                                         ("", "Owls hunt at night with silent feathers.")])
    e5, mini = recording(E5, "multilingual"), recording(MINILM, "minilm")
    a = svc.build("a", corpus, IndexSettings("flat"), e5, shared=True)
    b = svc.build("b", corpus, IndexSettings("flat"), mini, shared=True)
    ea, eb = svc.current("a"), svc.current("b")
    assert ea is not eb and ea.key != eb.key and E5 in ea.key and MINILM in eb.key
    assert (a["embedder"], b["embedder"]) == ("multilingual", "minilm")
    assert e5.slug != mini.slug  # their vectors and indexes live in different folders
    paths = svc._paths(corpus, e5, IndexSettings("flat")), svc._paths(corpus, mini, IndexSettings("flat"))
    assert not set(paths[0].values()) & set(paths[1].values())
    # A restart reads each one's own files back: MiniLM's build never serves the e5 index.
    again = S.SearchService(tmp_path)
    assert again.build("c", corpus, IndexSettings("flat"), mini, shared=True)["embeddings_from_cache"]
    assert again.current("c").embedder == "minilm" and mini.seen.count(corpus.texts_for_embedding()[0]) == 1


@pytest.fixture()
def two_roles(tmp_path, monkeypatch, tmp_path_factory):
    """Tiny models (different seeds, so different vectors) serve `embedder` and `multilingual`."""
    for role, seed in (("EMBEDDER", 0), ("MULTILINGUAL", 1)):
        folder = save_tiny(tiny_bert(seed=seed), minilm_tokenizer(), tmp_path_factory.mktemp(role.lower()))
        monkeypatch.setenv(f"TLAB_MODEL_{role}", str(folder))
    svc = S.SearchService(tmp_path, persist=False)
    monkeypatch.setattr(S.SERVICE, "_value", svc)
    return svc


def test_the_api_searches_with_the_embedder_that_built_the_index(two_roles):
    paste = "Tides follow the pull of the moon.\nOwls hunt at night with silent feathers."
    ml = search.build_index("s1", "paste", paste=paste, embedder="multilingual")
    en = search.build_index("s2", "paste", paste=paste)  # a script that passes nothing: MiniLM, as before
    assert (ml["embedder"], en["embedder"]) == ("multilingual", "minilm")
    assert ml["model"]["checkpoint"] != en["model"]["checkpoint"]
    assert search.search("s1", "owls", 1)["embedder"] == "multilingual"
    assert search.search("s2", "owls", 1)["embedder"] == "minilm"
    assert search.held_index("s1")["embedder"] == "multilingual"
    with pytest.raises(InputError, match="built with embedder 'minilm'"):
        search.search("s2", "owls", 1, embedder="multilingual")
    with pytest.raises(InputError, match="embedder must be one of"):
        search.build_index("s3", "paste", paste=paste, embedder="klingon")
    first = search.search("s4", "owls", 1, embedder="Multilingual")  # no index yet: the glossary, with it
    assert first["corpus"] == "glossary" and first["embedder"] == "multilingual"
