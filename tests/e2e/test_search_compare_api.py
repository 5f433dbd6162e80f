"""/compare_indexes through gradio_client: every index type rebuilt over the session's vectors."""

from __future__ import annotations

import json
import math

import pytest
from gradio_client import Client

from backend.search.corpora import load_glossary

# corpus, file, paste, text field, title field, keep good lines, words, overlap,
# index type, M, efConstruction, efSearch, nlist, nprobe, pq_m, pq_bits
GLOSSARY_FLAT = ("glossary", None, "", None, "", False, 120, 30, "flat", 32, 40, 16, 100, 8, 16, 8)


@pytest.fixture(scope="module")
def compared(client):
    _, stats, _ = client.predict(*GLOSSARY_FLAT, api_name="/build_index")
    plot, md, rows = client.predict(10, api_name="/compare_indexes")
    return stats, plot, md, rows


def test_every_index_type_is_measured(compared):
    stats, _, _, rows = compared
    n = len(load_glossary())
    assert stats["count"] == n
    # The sweep sizes IVF for the corpus: ~39 vectors per list, at most 4 sqrt(n).
    nlist = max(1, min(1024, int(4 * math.sqrt(n)), n // 39))
    nprobes = sorted({1, min(8, nlist), min(32, nlist)})
    assert [r["label"] for r in rows] == (
        ["Flat", "SQ8", "HNSW M32 efS16", "HNSW M32 efS64", "HNSW M32 efS128"]
        + [f"IVF{nlist} nprobe{p}" for p in nprobes]
        + [f"IVF{nlist}-PQ48 nprobe{min(8, nlist)}"])
    assert [r["index_type"] for r in rows] == (
        ["Flat (exact)", "SQ8 (8-bit scalar)"] + ["HNSW"] * 3 + ["IVF-Flat"] * len(nprobes) + ["IVF-PQ"])
    for r in rows:
        assert r["count"] == n and r["dims"] == 384 and r["recall_k"] == 10
        assert r["memory_bytes"] > 0 and r["query_ms_median"] > 0
        assert r["query_ms_p95"] >= r["query_ms_median"]
        assert 0.0 <= r["recall_at_k"] <= 1.0
    assert all(r["build_s"] > 0 for r in rows if r["index_type"] != "Flat (exact)")


def test_exact_configurations_have_perfect_recall(compared):
    _, _, _, rows = compared
    by_label = {r["label"]: r for r in rows}
    assert by_label["Flat"]["recall_at_k"] == 1.0
    # nprobe == nlist visits every list: IVF-Flat is then exact too.
    full = [r for r in rows if r["index_type"] == "IVF-Flat"
            and r["settings"]["nprobe"] == r["settings"]["nlist"]]
    assert full and all(r["recall_at_k"] == 1.0 for r in full)
    # Flat keeps every vector as float32.
    flat = by_label["Flat"]
    assert flat["memory_bytes"] >= flat["count"] * 384 * 4


def test_table_and_plot_show_every_configuration(compared):
    _, plot, md, rows = compared
    assert "| index | build s | memory MB | latency ms (median) | recall@10 |" in md
    assert all(f"| {r['label']} |" in md for r in rows)
    assert plot["type"] == "plotly"
    fig = json.loads(plot["plot"])
    assert fig["layout"]["title"]["text"] == "Speed / recall trade-off (marker size ~ memory)"
    assert [t["name"] for t in fig["data"]] == [r["label"] for r in rows]
    assert [t["y"] for t in fig["data"]] == [[r["recall_at_k"]] for r in rows]


def test_compare_needs_an_index_first(app_url):
    fresh = Client(app_url, verbose=False)
    with pytest.raises(Exception, match="build one first"):
        fresh.predict(10, api_name="/compare_indexes")
