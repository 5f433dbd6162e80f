"""Section 2c of the search benchmark (--full): one million clustered vectors, plain faiss calls."""

from __future__ import annotations

import gc
import time

import faiss
import numpy as np

from backend.search import index as si
from bench.vectors import K, _single_ms, clustered, plain_flat, table


def _mem(index) -> int:
    return int(faiss.serialize_index(index).nbytes)


def _refined_rows(ivfpq, x, sample, pq_build: float, row) -> None:
    """IVF-PQ's codes pick a shortlist; re-ranking it by SQ8 / SQ6 / SQ4 / exact vectors fixes the order."""
    d, nlist = x.shape[1], ivfpq.nlist
    # The PQ codes only pick a shortlist; re-ranking it by better vectors fixes the order. A
    # shortlist of 80 loses neighbours the PQ ranked lower, so it is swept (k_factor x k).
    for label, qt, factors in (("SQ8", faiss.ScalarQuantizer.QT_8bit, (8, 32, 128)),
                               ("SQ6", faiss.ScalarQuantizer.QT_6bit, (32, 128)),
                               ("SQ4", faiss.ScalarQuantizer.QT_4bit, (128,)),
                               ("fp32", None, (8, 128))):
        t0 = time.perf_counter()
        if qt is None:
            ref = faiss.IndexFlatIP(d)
        else:
            ref = faiss.IndexScalarQuantizer(d, qt, faiss.METRIC_INNER_PRODUCT)
            ref.train(sample)
        ref.add(x)
        refined = faiss.IndexRefine(ivfpq, ref)
        ref_build = time.perf_counter() - t0
        for f in factors:
            refined.k_factor = f
            row(f"IVF{nlist}-PQ48 nprobe16 + re-rank by {label} (shortlist {f * K})", refined,
                pq_build + ref_build)
        refined.this.disown()  # ivfpq stays ours
        del refined, ref
        gc.collect()


def bench_million(n: int = 1_000_000, hnsw_budget_s: float = 180.0) -> str:
    """HNSW, IVF-Flat, IVF-PQ and IVF-PQ re-ranked (IndexRefine) on 1M clustered vectors.

    Plain faiss calls (this row is about the library at scale, not our factory). IVF trains on a
    64k sample (k-means on all 1M would take tens of minutes on 2 cores). HNSW is added in
    chunks and stopped at `hnsw_budget_s`; a partial graph is reported as such."""
    import gc
    d = 384
    x, q = clustered(n)
    q = q[:200]
    rows = []
    flat_bytes = n * d * 4
    t0 = time.perf_counter()
    flat = plain_flat(x)
    exact = flat.search(q, K)[1]
    flat_build = time.perf_counter() - t0
    flat_ms = _single_ms(lambda r: flat.search(r, K), q, 50)
    rows.append(["Flat (exact, reference; plain faiss, default threads)", f"{flat_build:.1f}", f"{flat_bytes / 1e6:.0f}", "1.00",
                 f"{flat_ms:.2f}", "1.000"])
    del flat
    gc.collect()
    sample = x[np.random.default_rng(1).choice(n, size=64_000, replace=False)]

    def row(label, index, build_s, note=""):
        mem = _mem(index)
        with si.one_thread():
            ms = _single_ms(lambda r: index.search(r, K), q, 100)
        ids = index.search(q, K)[1]
        rec = si.recall_at_k(ids, exact, K)
        rows.append([label + note, f"{build_s:.1f}", f"{mem / 1e6:.0f}", f"{mem / flat_bytes:.2f}",
                     f"{ms:.3f}", f"{rec:.3f}"])
        print(rows[-1], flush=True)

    # IVF-PQ, then the same codes re-ranked by SQ8 / SQ6 / exact fp32 vectors.
    nlist = 1024
    t0 = time.perf_counter()
    ivfpq = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, nlist, 48, 8, faiss.METRIC_INNER_PRODUCT)
    ivfpq.train(sample)
    ivfpq.add(x)
    pq_build = time.perf_counter() - t0
    centroids = ivfpq.quantizer.reconstruct_n(0, nlist)
    ivfpq.nprobe = 16
    row(f"IVF{nlist}-PQ48 nprobe16", ivfpq, pq_build)
    _refined_rows(ivfpq, x, sample, pq_build, row)
    del ivfpq
    gc.collect()
    t0 = time.perf_counter()
    coarse = faiss.IndexFlatIP(d)  # IVF-PQ's trained centroids: the lists are the same
    coarse.add(centroids)
    ivf = faiss.IndexIVFFlat(coarse, d, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.is_trained = True
    ivf.add(x)
    ivf.nprobe = 16
    row(f"IVF{nlist}-Flat nprobe16", ivf, time.perf_counter() - t0, " (lists of the IVF-PQ: no k-means in its build s)")
    del coarse
    del ivf
    gc.collect()
    # HNSW: efConstruction 40 as in the app; added in chunks under a time cap.
    t0 = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 40
    added = 0
    while added < n and time.perf_counter() - t0 < hnsw_budget_s:
        hnsw.add(x[added: added + 50_000])
        added += 50_000
    build = time.perf_counter() - t0
    hnsw.hnsw.efSearch = 64
    if added >= n:
        row("HNSW M32 efC40 efS64", hnsw, build)
    else:
        rows.append([f"HNSW M32 efC40: stopped after {added:,} of {n:,} vectors at the {hnsw_budget_s:.0f} s cap",
                     f"{build:.0f} (partial)", "", "", "", ""])
    del hnsw, x
    gc.collect()
    return table(["index (1M x 384, 200 queries)", "build s", "memory MB", "memory / Flat",
                  "ms/query (one at a time, 1 thread)", f"recall@{K}"], rows)
