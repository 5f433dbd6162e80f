"""What the Search tab shows is what the session's index holds: after a refused build the old index
stays and the corpus selector goes back to it; the API-docs corpus is small enough to embed within
the request budget on a basic CPU, and its vectors persist so a new process reads them."""

from __future__ import annotations

import types

import pytest

from backend import search
from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.search import docstrings as D
from backend.search import service as S
from components.search import ui
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

PASTE = "\n".join(["Lighthouses guide ships along dangerous coasts.", "Sourdough bread rises thanks to wild yeast.",
                   "The violin has four strings tuned in fifths.", "Glaciers carve U-shaped valleys."])


@pytest.fixture(scope="module")
def embedder_dir(tmp_path_factory):
    return save_tiny(tiny_bert(seed=0), minilm_tokenizer(), tmp_path_factory.mktemp("tiny-embedder"))


@pytest.fixture()
def service(tmp_path, monkeypatch, embedder_dir):
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(embedder_dir))
    svc = S.SearchService(tmp_path, persist=True)
    monkeypatch.setattr(S.SERVICE, "_value", svc)
    return svc


def request(sid):
    return types.SimpleNamespace(session_hash=sid)


def test_held_index_names_the_source_of_the_current_index(service):
    assert search.held_index("s1") is None
    search.build_index("s1", "glossary")
    held = search.held_index("s1")
    assert held["source"] == "glossary" and held["corpus"] == "glossary"
    assert held["count"] == len(service.current("s1").corpus) and held["index_type"]
    search.build_index("s1", "paste", paste=PASTE)
    assert search.held_index("s1") == {"source": "paste", "corpus": "pasted text", "count": 4,
                                       "index_type": service.current("s1").stats["index_type"],
                                       "embedder": "minilm"}


def test_a_refused_build_keeps_the_old_index_and_the_selector_goes_back_to_it(service, monkeypatch):
    search.build_index("s1", "glossary")
    n = len(service.current("s1").corpus)
    # The API-docs build is refused (over the passage limit here; over the time budget on a slow box).
    import dataclasses

    monkeypatch.setattr(service, "limits", dataclasses.replace(service.limits, max_passages=n))
    with pytest.raises(InputError, match="over the limit"):
        search.build_index("s1", "docstrings")
    assert search.held_index("s1")["source"] == "glossary"
    radio, note = ui.corpus_after_failure("docstrings", request("s1"))
    assert radio["value"] == "glossary"
    assert note["visible"] is True
    assert note["value"].startswith("↩ Switched back to **the glossary**: the API docs could not be indexed")
    assert f"searches still run on the glossary ({n:,} passages, " in note["value"]
    # A failed rebuild of the corpus the index already holds switches nothing and says nothing.
    radio, note = ui.corpus_after_failure("glossary", request("s1"))
    assert radio == {"__type__": "update"} and note["visible"] is False


def test_a_refusal_before_any_index_points_at_the_first_search(service):
    radio, note = ui.corpus_after_failure("docstrings", request("fresh"))
    assert radio["value"] == "glossary"
    assert "no index yet, so your first search builds the glossary first" in note["value"]


def test_a_failed_upload_switches_back_to_the_pasted_corpus_by_its_name(service):
    search.build_index("s1", "paste", paste=PASTE)
    with pytest.raises(InputError):
        search.build_index("s1", "upload", file=None)
    radio, note = ui.corpus_after_failure("upload", request("s1"))
    assert radio["value"] == "paste"
    assert note["value"].startswith("↩ Switched back to **pasted text**: your upload could not be indexed")
    assert "searches still run on pasted text (4 passages" in note["value"]


def test_a_time_budget_refusal_keeps_the_old_index(service):
    search.build_index("s1", "glossary")
    b = budget.Budget(seconds=0.001)
    with budget.scope(budget=b), pytest.raises(budget.BudgetExceeded):
        import time

        time.sleep(0.01)
        search.build_index("s1", "paste", paste=PASTE)
    assert search.held_index("s1")["source"] == "glossary"


# ----------------------------------------------------------------------------- the API-docs corpus
def test_docstrings_corpus_is_bounded_and_leads_with_what_the_app_teaches():
    passages, notes = D.collect_docstrings()
    titles = [p.title for p in passages]
    assert 400 <= len(passages) <= D.MAX_ENTRIES, len(passages)  # 3,364 before the caps
    assert len(set(p.text for p in passages)) == len(passages)

    def share(prefix):
        return sum(t.startswith(prefix) for t in titles)

    assert share("transformers.pipelines") >= 40
    assert share("transformers.generation") >= 40
    assert share("transformers.tokenization_utils_base") >= 10
    assert share("torch.nn") >= 100
    assert share("transformers.generation.continuous_batching") == 0  # 226 entries crowded the rest out
    assert share("numpy.distutils") == 0 and share("numpy.f2py") == 0
    assert {"faiss.serialize_index", "faiss.extra_wrappers.Kmeans"} <= set(titles)
    # Every part keeps to its cap.
    for mod, _dist, parts in D.LIBRARIES:
        assert share(mod + ".") + (mod in titles) <= sum(cap for _, cap in parts)


def test_docstrings_corpus_scales_its_caps_to_a_smaller_limit():
    passages, _ = D.collect_docstrings(max_entries=200)
    titles = [p.title for p in passages]
    assert 100 <= len(passages) <= 200
    assert any(t.startswith("transformers.pipelines") for t in titles)
    assert any(t.startswith("torch.nn") for t in titles)


def test_a_built_in_index_is_read_from_disk_by_a_new_process(service, tmp_path, monkeypatch, embedder_dir):
    first = search.build_index("s1", "glossary")
    assert first["embeddings_from_cache"] is False
    # A new process: a new service on the same cache dir, nothing in memory.
    again = S.SearchService(tmp_path, persist=True)
    monkeypatch.setattr(S.SERVICE, "_value", again)
    monkeypatch.setattr(S.Embedder, "embed", lambda *a, **k: pytest.fail("embedded again"))
    from backend.search import api

    monkeypatch.setattr(api.HubEmbedder, "embed", lambda *a, **k: pytest.fail("embedded again"))
    second = search.build_index("s2", "glossary")
    assert second["embeddings_from_cache"] is True and second["index_from_cache"] is True
    assert second["count"] == first["count"]


def test_a_build_estimate_is_checked_against_what_it_took():
    from components.search.ui import estimate_check

    assert estimate_check(None) == "" and estimate_check({"estimated_s": None, "seconds": 3.0}) == ""
    assert "as estimated" in estimate_check({"estimated_s": 40.0, "seconds": 45.0})
    said = estimate_check({"estimated_s": 40.0, "seconds": 90.0})
    assert "90 s" in said and "40 s" in said and "125% longer" in said
