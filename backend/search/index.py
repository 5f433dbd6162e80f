"""FAISS index factory, stats (build time, memory, latency, recall@k) and persistence.

All indexes use inner product on L2-normalised vectors, i.e. cosine similarity: higher is
better and results come back already sorted best first (no L2-distances-read-as-scores
mistake). Query-time knobs (HNSW efSearch, IVF nprobe) are applied per search and are not
part of the persistence key, so changing them never rebuilds an index.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field

import faiss
import numpy as np

from backend.runtime.errors import InputError

INDEX_KINDS = ("flat", "sq8", "hnsw", "ivf_flat", "ivf_pq")
INDEX_LABELS = {"flat": "Flat (exact)", "sq8": "SQ8 (8-bit scalar)", "hnsw": "HNSW",
                "ivf_flat": "IVF-Flat", "ivf_pq": "IVF-PQ"}
AUTO = "auto"  # not an index: "pick one for this corpus size" (choose_index)

# The auto choice. One exact query (one thread) reads every float once; measured on the 2-core
# box (bench/search.py, "single query" section): ~0.1 ns per float while the vectors fit in
# cache, 0.33 ms at 10k x 384 and 1.5 ms at 30k x 384, 14 ms at 100k x 384. Exact search stays
# the choice up to 8 M floats (~21k vectors of 384 dims, about 1 ms); above it an HNSW graph
# answers in ~0.3 ms at recall@10 >= 0.95 (efSearch 96: 0.985 at 100k on queries near corpus
# vectors, where efSearch 64 gave 0.94-0.95).
AUTO_FLAT_MAX_FLOATS = 8_000_000
FLAT_NS_PER_FLOAT = 0.1
AUTO_HNSW = {"hnsw_m": 32, "ef_construction": 40, "ef_search": 96}


@dataclass
class IndexSettings:
    kind: str = AUTO
    hnsw_m: int = 32
    ef_construction: int = 40
    ef_search: int = 16
    nlist: int = 100
    nprobe: int = 8
    pq_m: int = 16
    pq_bits: int = 8

    def validate(self) -> "IndexSettings":
        kind = (self.kind or "flat").lower().replace("-", "_")
        kind = {"ivf": "ivf_flat", "ivfflat": "ivf_flat", "ivfpq": "ivf_pq", "exact": "flat",
                "sq_8": "sq8"}.get(kind, kind)
        if kind not in INDEX_KINDS + (AUTO,):
            raise InputError(f"Unknown index type '{self.kind}'. Choose one of: "
                             f"{', '.join((AUTO,) + INDEX_KINDS)}.")
        self.kind = kind
        for name, lo, hi in (("hnsw_m", 2, 256), ("ef_construction", 1, 4096),
                             ("ef_search", 1, 4096), ("nlist", 1, 65536), ("nprobe", 1, 65536),
                             ("pq_m", 1, 384), ("pq_bits", 1, 16)):
            v = getattr(self, name)
            try:
                v = int(v)
            except (TypeError, ValueError):
                raise InputError(f"{name} must be a whole number, got {v!r}.") from None
            if not lo <= v <= hi:
                raise InputError(f"{name} must be between {lo} and {hi}, got {v}.")
            setattr(self, name, v)
        return self

    def build_params(self) -> dict:
        """What changes the built index (the persistence key); excludes query-time knobs."""
        if self.kind in ("flat", "sq8", AUTO):
            return {"kind": self.kind}
        if self.kind == "hnsw":
            return {"kind": "hnsw", "M": self.hnsw_m, "efConstruction": self.ef_construction}
        if self.kind == "ivf_flat":
            return {"kind": "ivf_flat", "nlist": self.nlist}
        return {"kind": "ivf_pq", "nlist": self.nlist, "pq_m": self.pq_m, "pq_bits": self.pq_bits}

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.build_params(), sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class BuiltIndex:
    index: faiss.Index
    settings: IndexSettings  # effective settings (after adapting to the data)
    notes: list[str] = field(default_factory=list)
    build_s: float = 0.0
    index_choice: dict = field(default_factory=dict)  # {"auto", "kind", "reason"}: who chose the index and why


def choose_index(n: int, d: int) -> tuple[str, str]:
    """The index kind for n vectors of d dims, and one line saying why (the "auto" choice).

    Exact search costs n x d multiply-adds per query; while that is cheap (<= ~1 ms) nothing
    beats it, and it is exact. Past it, a graph (HNSW) visits a few thousand vectors instead."""
    floats = int(n) * int(d)
    est_ms = floats * FLAT_NS_PER_FLOAT / 1e6
    size = f"{n:,} vectors x {d} dims = {floats / 1e6:.1f} M floats"
    limit = f"{AUTO_FLAT_MAX_FLOATS / 1e6:.0f} M"
    if floats <= AUTO_FLAT_MAX_FLOATS:
        return "flat", (f"auto -> Flat (exact): {size} <= {limit}, so one exact query costs "
                        f"~{est_ms:.2f} ms on one thread.")
    return "hnsw", (f"auto -> HNSW (M={AUTO_HNSW['hnsw_m']}, efSearch={AUTO_HNSW['ef_search']}): {size} "
                    f"> {limit}, so one exact query would cost ~{est_ms:.1f} ms or more; the graph "
                    f"answers in well under 1 ms at recall@10 ~0.95+.")


def resolve_auto(settings: "IndexSettings", n: int, d: int) -> tuple["IndexSettings", dict]:
    """Settings with "auto" replaced by the chosen kind (and its knobs) -> (settings, index choice)."""
    s = IndexSettings(**asdict(settings)).validate()
    if s.kind != AUTO:
        return s, {"auto": False, "kind": s.kind,
                   "reason": f"{INDEX_LABELS[s.kind]}: chosen in the settings."}
    kind, reason = choose_index(n, d)
    s.kind = kind
    if kind == "hnsw":
        for name, value in AUTO_HNSW.items():
            setattr(s, name, value)
    return s, {"auto": True, "kind": kind, "reason": reason}


def _largest_divisor_at_most(d: int, m: int) -> int:
    for cand in range(min(m, d), 0, -1):
        if d % cand == 0:
            return cand
    return 1


def adapt_settings(settings: IndexSettings, n: int, d: int) -> tuple[IndexSettings, list[str]]:
    """Make the requested settings feasible for n vectors of dimension d; say what changed."""
    s, _ = resolve_auto(settings, n, d)
    notes: list[str] = []
    if s.kind in ("ivf_flat", "ivf_pq"):
        # k-means wants ~39 points per centroid; at the very least one per centroid.
        if n < s.nlist * 39:
            new = max(1, min(s.nlist, int(math.sqrt(n)), n // 39 or 1))
            if new != s.nlist:
                notes.append(f"IVF: {n} vectors are too few for nlist={s.nlist} (k-means needs "
                             f"~39 vectors per list); using nlist={new} instead.")
                s.nlist = new
        if s.nprobe > s.nlist:
            notes.append(f"IVF: nprobe={s.nprobe} is more than nlist={s.nlist}; using "
                         f"nprobe={s.nlist} (searches every list, i.e. exact).")
            s.nprobe = s.nlist
    if s.kind == "ivf_pq":
        if d % s.pq_m:
            new = _largest_divisor_at_most(d, s.pq_m)
            notes.append(f"IVF-PQ: pq_m={s.pq_m} does not divide the dimension {d}; using "
                         f"pq_m={new}.")
            s.pq_m = new
        max_bits = max(1, int(math.floor(math.log2(max(n, 2)))))
        if (1 << s.pq_bits) > n:
            notes.append(f"IVF-PQ: {n} vectors are too few to train 2^{s.pq_bits} codes per "
                         f"sub-quantizer; using pq_bits={min(s.pq_bits, max_bits)}.")
            s.pq_bits = min(s.pq_bits, max_bits)
    return s, notes


def build_index(vectors: np.ndarray, settings: IndexSettings) -> BuiltIndex:
    """Train (if needed) and fill an inner-product index over normalised vectors."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) == 0:
        raise InputError("There are no vectors to index: the corpus is empty.")
    n, d = vectors.shape
    _, index_choice = resolve_auto(settings, n, d)
    s, notes = adapt_settings(settings, n, d)
    t0 = time.perf_counter()
    ip = faiss.METRIC_INNER_PRODUCT
    if s.kind == "flat":
        index = faiss.IndexFlatIP(d)
    elif s.kind == "sq8":  # one byte per dimension: 4x fewer bytes to read than float32
        index = faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_8bit, ip)
    elif s.kind == "hnsw":
        index = faiss.IndexHNSWFlat(d, s.hnsw_m, ip)
        index.hnsw.efConstruction = s.ef_construction
    elif s.kind == "ivf_flat":
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, s.nlist, ip)
    else:
        index = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, s.nlist, s.pq_m, s.pq_bits, ip)
    if not index.is_trained:
        index.train(vectors)
    index.add(vectors)
    build_s = time.perf_counter() - t0
    apply_query_params(index, s)
    return BuiltIndex(index=index, settings=s, notes=notes, build_s=build_s, index_choice=index_choice)


def faiss_settings(s: IndexSettings) -> dict:
    """The index a run used, in FAISS's own names (what a notebook passes to build the same index):
    its kind, the class, the metric (inner product on L2-normalised vectors = cosine) and its knobs,
    query-time ones (efSearch, nprobe) included."""
    out = {"kind": s.kind, "metric": "inner_product", "normalized": True}
    if s.kind == "flat":
        out["faiss_class"] = "IndexFlatIP"
    elif s.kind == "sq8":
        out.update(faiss_class="IndexScalarQuantizer", qtype="QT_8bit")
    elif s.kind == "hnsw":
        out.update(faiss_class="IndexHNSWFlat", M=s.hnsw_m, efConstruction=s.ef_construction, efSearch=s.ef_search)
    elif s.kind == "ivf_flat":
        out.update(faiss_class="IndexIVFFlat", nlist=s.nlist, nprobe=s.nprobe)
    else:
        out.update(faiss_class="IndexIVFPQ", nlist=s.nlist, nprobe=s.nprobe, M=s.pq_m, nbits=s.pq_bits)
    return out


def apply_query_params(index: faiss.Index, s: IndexSettings) -> None:
    if isinstance(index, faiss.IndexHNSW):
        index.hnsw.efSearch = s.ef_search
    ivf = _as_ivf(index)
    if ivf is not None:
        ivf.nprobe = min(s.nprobe, ivf.nlist)


def _as_ivf(index):
    try:
        return faiss.extract_index_ivf(index)
    except RuntimeError:
        return None


@contextlib.contextmanager
def one_thread():
    """FAISS on one OpenMP thread for the block, then as before. One query is far too little
    work to split: on a busy 2-core box two threads made a 10k Flat query 16 ms, one 0.3 ms.
    (libgomp keeps this setting per calling thread, so other requests are not affected.)"""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def search(index: faiss.Index, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """-> (scores, ids), each (nq, k); ids of -1 (not enough results) are left to the caller.
    A single query runs on one thread (see `one_thread`)."""
    q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
    k = max(1, min(int(k), index.ntotal))
    before = faiss.omp_get_max_threads() if len(q) == 1 else 1
    if before == 1:
        return index.search(q, k)
    faiss.omp_set_num_threads(1)  # one_thread(), inlined: this is the per-query hot path
    try:
        return index.search(q, k)
    finally:
        faiss.omp_set_num_threads(before)


def exact_neighbours(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Ground truth by brute-force inner product (the reference for recall)."""
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return flat.search(np.ascontiguousarray(queries, dtype=np.float32), k)[1]


def recall_at_k(approx_ids: np.ndarray, exact_ids: np.ndarray, k: int) -> float:
    """Mean over queries of |approx top-k  ∩  exact top-k| / k."""
    approx_ids = np.atleast_2d(approx_ids)[:, :k]
    exact_ids = np.atleast_2d(exact_ids)[:, :k]
    if exact_ids.size == 0:
        return 1.0
    hits = [len(set(a[a >= 0].tolist()) & set(e[e >= 0].tolist())) / max(1, (e >= 0).sum())
            for a, e in zip(approx_ids, exact_ids)]
    return float(np.mean(hits))


def index_bytes(index: faiss.Index) -> int:
    return int(faiss.serialize_index(index).nbytes)


def measure(built: BuiltIndex, vectors: np.ndarray, k: int = 10, n_queries: int = 100,
            seed: int = 0) -> dict:
    """Stats a person compares across knobs: memory, single-query latency, recall@k."""
    index = built.index
    n = len(vectors)
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    sample = rng.choice(n, size=min(n_queries, n), replace=False)
    # Queries near but not equal to corpus vectors: realistic, and not trivially rank 1.
    noise = rng.normal(scale=0.05, size=(len(sample), vectors.shape[1])).astype(np.float32)
    q = vectors[sample] + noise
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    exact = exact_neighbours(vectors, q, k)
    approx = index.search(q, k)[1]
    lat = []
    with one_thread():  # as the app searches: one query, one thread
        for row in q[: min(50, len(q))]:
            row = np.ascontiguousarray(row[None, :])
            t0 = time.perf_counter()
            index.search(row, k)
            lat.append((time.perf_counter() - t0) * 1000)
    return {
        "count": int(index.ntotal),
        "dims": int(vectors.shape[1]),
        "index_type": INDEX_LABELS[built.settings.kind],
        "settings": asdict(built.settings),
        "build_s": round(built.build_s, 4),
        "memory_bytes": index_bytes(index),
        "memory_mb": round(index_bytes(index) / 1e6, 3),
        "vectors_mb": round(vectors.nbytes / 1e6, 3),
        "query_ms_median": round(float(np.median(lat)), 4),
        "query_ms_p95": round(float(np.percentile(lat, 95)), 4),
        "query_ms_each": [round(v, 4) for v in lat],  # the same queries for every index: a paired comparison
        "recall_k": k,
        "recall_at_k": round(recall_at_k(approx, exact, k), 4),
        "recall_queries": int(len(q)),
        "notes": list(built.notes),
        "index_choice": dict(built.index_choice),
    }


# --------------------------------------------------------------------------- persistence
def atomic_write_bytes(path: str, data: bytes) -> None:
    """Write to a temp file in the same folder, fsync, then os.replace: all or nothing."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_index(index: faiss.Index, path: str) -> None:
    atomic_write_bytes(path, faiss.serialize_index(index).tobytes())


def load_index(path: str) -> faiss.Index:
    return faiss.read_index(path)


def save_vectors(vectors: np.ndarray, path: str) -> None:
    import io
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


def load_vectors(path: str) -> np.ndarray:
    return np.load(path, allow_pickle=False)


def save_json(obj, path: str) -> None:
    atomic_write_bytes(path, json.dumps(obj, indent=1, sort_keys=True).encode("utf-8"))
