"""Semantic search: embed a corpus, build/persist a FAISS index, query it, per session.

`SearchService` owns the indexes. Built-in corpora (the glossary, the docstrings) are shared
by every session and built once per (corpus, embedder, index settings); a corpus a person
uploads lives only in that person's session (keyed by the caller's session id) and is
evicted when idle. Embeddings and indexes of built-in corpora persist in the cache dir, keyed
by corpus content hash + embedder + build settings, written atomically, so a restart reuses
them. A private corpus never touches the disk: its vectors and index live in its session's
memory only, so they go with the session (closed page, idle eviction, memory pressure), and
nobody can learn from a cache hit that the same content was uploaded before.

Model-level: it takes an `Embedder`; `backend.search.api` gets one from the hub.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from backend.runtime.once import BuildOnce
from backend.runtime.client_store import ClientStore
from backend.runtime import memory
from backend.runtime.config import BUILTIN_CORPORA, SearchLimits, get_settings, store_settings
from backend.runtime.singleton import ProcessWide
from backend.runtime.errors import InputError
from backend.search import index as si
from backend.search import room
from backend.search import speed
from backend.search.embedders import ENGLISH, Embedder
from backend.search.corpora import Corpus, load_glossary
from backend.search.index import IndexSettings
from backend.search.persistence import clean_stale_temp_files, read_json
from backend.search.projection import pca_2d
from backend.runtime.validation import as_int, check_text

MAX_K = 100
MAP_MAX_POINTS = 20_000

ProgressFn = Callable[[float, str], None]  # (fraction 0..1, description)


@dataclass
class IndexEntry:
    """One built index over one corpus: everything a search or the map needs."""

    corpus: Corpus
    vectors: np.ndarray
    built: si.BuiltIndex
    stats: dict
    key: str
    shared: bool
    embedder: str = ENGLISH  # which choice of backend.search.embedders embedded it
    pca: dict | None = None
    stats_by_query: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class SessionState:
    entry: IndexEntry | None = None
    query_params: tuple = (16, 8)
    index_choice: dict | None = None  # the current index's kind, who chose it and why (index.resolve_auto)
    upload: tuple[str, bytes] | None = None  # the last uploaded file (its temp copy is deleted once read)


def _private_bytes(st: SessionState) -> int:
    """What a session holds outside the shared indexes: its private vectors (+ index) and upload."""
    n = st.entry.vectors.nbytes * 2 if st.entry is not None and not st.entry.shared else 0
    return n + (len(st.upload[1]) if st.upload else 0)


class SearchService:
    def __init__(self, cache_dir: str | os.PathLike, limits: SearchLimits | None = None,
                 idle_s: float = 3600.0, max_sessions: int = 64, persist: bool = True,
                 max_private_bytes: int | None = None, max_shared: int = 8, keep_s: float = 0.0,
                 share: float = 1.0, max_age_s: float | None = None):
        self.cache_dir = os.path.join(str(cache_dir), "search")
        self.limits = limits or SearchLimits.from_env()
        self.persist = persist
        self.max_private_bytes = self.limits.session_bytes if max_private_bytes is None else max_private_bytes
        # Shared indexes of built-in corpora: built once (two sessions asking at once build it
        # once), the oldest forgotten beyond max_shared (sessions using one keep it).
        self._shared: BuildOnce[IndexEntry] = BuildOnce(max_entries=max_shared)
        self._sessions: ClientStore[SessionState] = ClientStore(  # shared per client, reservations age out
            SessionState, share=share, max_age_s=max_age_s, idle_s=idle_s, max_entries=max_sessions, max_bytes=self.max_private_bytes,
            size_of=_private_bytes, keep_s=keep_s, describe=room.held)
        self._builtin: dict[str, Corpus] = {}
        self._lock = self._sessions.lock
        if persist:
            clean_stale_temp_files(self.cache_dir)

    # ------------------------------------------------------------------ corpora
    def builtin_corpus(self, name: str, progress: ProgressFn | None = None) -> Corpus:
        with self._lock:
            if name in self._builtin:
                return self._builtin[name]
        if name == "glossary":
            corpus = load_glossary()
        elif name == "docstrings":
            from backend.search.docstrings import docstring_corpus
            corpus = docstring_corpus(os.path.join(self.cache_dir, "corpora"), progress=progress)
        else:
            raise InputError(f"Unknown built-in corpus '{name}'. Choose one of: "
                             f"{', '.join(BUILTIN_CORPORA)}.")
        with self._lock:
            return self._builtin.setdefault(name, corpus)

    # ------------------------------------------------------------------ sessions
    def _session(self, session_id: str) -> SessionState:
        if not session_id:
            raise InputError("No session id: the search API keeps indexes per session.")
        return self._sessions.get(session_id)

    def evict_idle(self, now: float | None = None) -> list[str]:
        """Drop sessions idle longer than idle_s, then the oldest beyond max_sessions."""
        return self._sessions.evict(now=now)

    def remember_upload(self, session_id: str, path: str, data: bytes) -> None:
        """Keep the upload's bytes for a rebuild when there is room (else a rebuild reads it again)."""
        st = self._session(session_id)
        held = _private_bytes(st) - (len(st.upload[1]) if st.upload else 0)
        if self._sessions.room_for(session_id, held + len(data)):
            st.upload = (path, data)

    def gone_message(self, session_id: str) -> str | None:
        """Why this session has no private index any more (evicted); None if it never lost one."""
        return room.gone_message(self._sessions, session_id)

    def _check_room(self, session_id: str, corpus: Corpus, embedder: Embedder) -> None:
        st = self._session(session_id)
        need = room.private_bytes_estimate(len(corpus), embedding_dim(embedder))
        why = room.refusal(self._sessions, session_id, need + (len(st.upload[1]) if st.upload else 0))
        if why is not None:
            raise InputError(why)

    def recall_upload(self, session_id: str, path: str) -> bytes | None:
        """The bytes of this session's last upload when `path` names it (a rebuild)."""
        st = self._sessions.peek(session_id)
        return st.upload[1] if st is not None and st.upload and st.upload[0] == path else None

    def drop_session(self, session_id: str) -> None:
        self._sessions.drop(session_id)
        memory.give_back()  # the closed page's index blocks, freed into malloc arenas, go back

    def session_count(self) -> int:
        return len(self._sessions)

    # ------------------------------------------------------------------ paths
    def _paths(self, corpus: Corpus, embedder: Embedder, settings: IndexSettings) -> dict:
        base = os.path.join(self.cache_dir, embedder.slug)
        h = corpus.content_hash
        return {"vectors": os.path.join(base, f"{h}.npy"),
                "index": os.path.join(base, f"{h}-{settings.key()}.faiss"),
                "meta": os.path.join(base, f"{h}-{settings.key()}.json")}

    # ------------------------------------------------------------------ build
    def build(self, session_id: str, corpus: Corpus, settings: IndexSettings, embedder: Embedder,
              shared: bool = False, progress: ProgressFn | None = None,
              recall_k: int = 10) -> dict:
        """Embed + index `corpus` and make it the session's current index. -> stats dict."""
        settings = IndexSettings(**asdict(settings)).validate()
        settings, index_choice = si.resolve_auto(settings, len(corpus), embedding_dim(embedder))
        st = self._session(session_id)
        key = f"{corpus.content_hash}|{embedder.name}|{settings.key()}"
        if shared:
            entry = self._shared.get(key, lambda: self._build_entry(corpus, settings, embedder, key, True,
                                                                    progress))[0]
        elif st.entry is not None and st.entry.key == key and not st.entry.shared:
            entry = st.entry
        else:
            self._check_room(session_id, corpus, embedder)  # before any embedding: refused in a moment
            entry = self._build_entry(corpus, settings, embedder, key, False, progress)
        # Query-time knobs (efSearch, nprobe) apply without a rebuild, per session: a shared
        # index is re-tuned under its lock just before each search of this session.
        q = (settings.ef_search, min(settings.nprobe, entry.built.settings.nlist))
        with entry.lock:
            skey = (q, recall_k)
            stats = entry.stats_by_query.get(skey)
            if stats is None:
                _apply(entry, q)
                stats = si.measure(entry.built, entry.vectors, k=recall_k)
                base = entry.stats
                stats.update({k: base[k] for k in ("embed_s", "embeddings_from_cache",
                                                   "index_from_cache", "load_s", "build_s",
                                                   "notes") if k in base})
                entry.stats_by_query[skey] = stats
        with self._lock:
            st.entry = entry
            st.query_params = q
            st.index_choice = index_choice
        self._sessions.touch(session_id)
        self._sessions.forget_gone(session_id)
        self._sessions.evict(keep=session_id)  # the new index counts against the memory budget
        stats = dict(stats)
        stats["settings"] = {**stats["settings"], "ef_search": q[0], "nprobe": q[1]}
        stats["index_choice"] = index_choice  # per call: auto and an explicit choice share one built index
        stats["corpus"] = corpus.name
        stats["shared"] = shared
        stats["corpus_notes"] = list(corpus.notes)
        stats["model"] = embedder.describe
        stats["embedder"] = entry.embedder
        stats["index_settings"] = {**si.faiss_settings(entry.built.settings), **embedder.settings()}
        return stats

    def _build_entry(self, corpus: Corpus, settings: IndexSettings, embedder: Embedder, key: str,
                     shared: bool, progress: ProgressFn | None) -> IndexEntry:
        if len(corpus) > self.limits.max_passages:
            raise InputError(f"The corpus has {len(corpus):,} passages, over the limit of "
                             f"{self.limits.max_passages:,}. Use a smaller corpus.")
        paths = self._paths(corpus, embedder, settings)
        persist = self.persist and shared  # a private corpus stays in memory, in its session only
        notes: list[str] = []
        vectors, emb_cached, embed_s = None, False, 0.0
        if persist and os.path.exists(paths["vectors"]):
            try:
                v = si.load_vectors(paths["vectors"])
                if v.shape[0] == len(corpus):
                    vectors, emb_cached = v, True
            except Exception:  # a damaged cache file is rebuilt, never fatal
                notes.append("The cached embeddings could not be read; recomputed them.")
        if vectors is None:
            t0 = time.perf_counter()
            n = len(corpus)
            cb = None
            if progress is not None:
                def cb(done, total):
                    progress(0.9 * done / max(total, 1), f"Embedding passages {done}/{total}")
            vectors = embedder.embed(embedder.passages(corpus.texts_for_embedding()), progress=cb)
            embed_s = time.perf_counter() - t0
            if persist:
                si.save_vectors(vectors, paths["vectors"])
            if progress is not None:
                progress(0.9, f"Embedded {n} passages in {embed_s:.1f} s")
        if progress is not None:
            progress(0.92, "Building the index")
        built, idx_cached, load_s = None, False, 0.0
        if persist and os.path.exists(paths["index"]):
            t0 = time.perf_counter()
            try:
                index = si.load_index(paths["index"])
                meta = read_json(paths["meta"])
                if index.ntotal == len(corpus) and index.d == vectors.shape[1]:
                    eff = IndexSettings(**{**asdict(settings), **meta.get("settings", {})})
                    eff.ef_search, eff.nprobe = settings.ef_search, min(settings.nprobe, eff.nlist)
                    si.apply_query_params(index, eff)
                    built = si.BuiltIndex(index, eff, list(meta.get("notes", [])),
                                          float(meta.get("build_s", 0.0)))
                    idx_cached, load_s = True, time.perf_counter() - t0
            except Exception:
                notes.append("The cached index could not be read; rebuilt it.")
        if built is None:
            built = si.build_index(vectors, settings)
            if persist:
                si.save_index(built.index, paths["index"])
                si.save_json({"settings": asdict(built.settings), "notes": built.notes,
                              "build_s": built.build_s, "count": int(built.index.ntotal)},
                             paths["meta"])
        if progress is not None:
            progress(0.97, "Measuring latency and recall")
        entry = IndexEntry(corpus=corpus, vectors=vectors, built=built, stats={}, key=key,
                           shared=shared, embedder=embedder.choice)
        stats = si.measure(built, vectors)
        stats.update({"embed_s": round(embed_s, 3), "embeddings_from_cache": emb_cached,
                      "index_from_cache": idx_cached, "load_s": round(load_s, 4)})
        stats["notes"] = notes + list(built.notes)
        entry.stats = stats
        entry.stats_by_query[((built.settings.ef_search, built.settings.nprobe), 10)] = stats
        return entry

    # ------------------------------------------------------------------ search
    def current(self, session_id: str) -> IndexEntry | None:
        return self._session(session_id).entry

    def search(self, session_id: str, query: str, k: int, embedder: Embedder) -> dict:
        """Top-k passages of the session's current index for `query`, best first."""
        t_start = time.perf_counter()
        query = check_text(query, "query")
        k = as_int("k", k, lo=1)
        entry = self.current(session_id)
        if entry is None:
            raise InputError(self.gone_message(session_id) or
                             "No index in this session yet: build one first (choose a corpus "
                             "and press 'Build index', or call /build_index).")
        notes = []
        n = len(entry.corpus)
        if k > MAX_K:
            notes.append(f"k={k} is over the limit of {MAX_K}; showing {min(MAX_K, n)}.")
            k = MAX_K
        if k > n:
            notes.append(f"k={k} is larger than the corpus ({n} passages); showing all {n}.")
            k = n
        n_tokens = len(embedder.tokenizer(query, truncation=False)["input_ids"])
        if n_tokens > 256:
            notes.append(f"The query has {n_tokens} tokens; the embedder reads the first 256.")
        t0 = time.perf_counter()
        qv = embedder.embed(embedder.queries([query]))
        t1 = time.perf_counter()
        with entry.lock:
            _apply(entry, self._session(session_id).query_params)
            scores, ids = si.search(entry.built.index, qv, k)
        t2 = time.perf_counter()
        results = []
        for rank, (i, s) in enumerate(zip(ids[0].tolist(), scores[0].tolist()), start=1):
            if i < 0:
                continue
            p = entry.corpus.passages[i]
            results.append({"rank": len(results) + 1, "id": int(i), "score": round(float(s), 4),
                            "title": p.title, "text": p.text})
        if len(results) < k:
            notes.append(f"The {entry.stats['index_type']} index returned {len(results)} of {k} "
                         f"results (approximate search visits only part of the corpus; raise "
                         f"nprobe / efSearch).")
        t3 = time.perf_counter()
        return {
            "query": query,
            "k": k,
            "corpus": entry.corpus.name,
            "count": n,
            "index_type": entry.stats["index_type"],
            "index_choice": self._session(session_id).index_choice,
            "results": results,
            "notes": notes,
            "timing_ms": {"encode": round((t1 - t0) * 1000, 2), "search": round((t2 - t1) * 1000, 3),
                          "format": round((t3 - t2) * 1000, 3),
                          "total": round((t3 - t_start) * 1000, 2)},
            "model": embedder.describe,
            "embedder": entry.embedder,
            "index_settings": {**si.faiss_settings(entry.built.settings), **embedder.settings()},
            "_query_vector": qv[0],
        }

    # ------------------------------------------------------------------ knob sweep
    def sweep(self, session_id: str, recall_k: int = 10, max_vectors: int = 50_000,
              progress: ProgressFn | None = None) -> list[dict]:
        """Build each index type (in memory) over the session's vectors and measure them all,
        so a person sees what each knob costs and buys on *their* corpus."""
        entry = self.current(session_id)
        if entry is None:
            raise InputError("No index in this session yet: build one first.")
        x = entry.vectors
        n = len(x)
        if n > max_vectors:
            raise InputError(f"The comparison rebuilds several indexes; it is limited to "
                             f"{max_vectors:,} vectors and this corpus has {n:,}. Use the "
                             f"benchmark script (bench/search.py) for large corpora.")
        nlist = max(1, min(1024, int(4 * np.sqrt(n)), n // 39 or 1))
        d = x.shape[1]
        configs = [("Flat", IndexSettings("flat")), ("SQ8", IndexSettings("sq8"))]
        configs += [(f"HNSW M32 efS{e}", IndexSettings("hnsw", hnsw_m=32, ef_construction=40,
                                                        ef_search=e)) for e in (16, 64, 128)]
        configs += [(f"IVF{nlist} nprobe{p}", IndexSettings("ivf_flat", nlist=nlist, nprobe=p))
                    for p in sorted({1, min(8, nlist), min(32, nlist)})]
        pq_m = next(m for m in (48, 32, 24, 16, 12, 8, 4, 2, 1) if d % m == 0 and m <= d)
        configs += [(f"IVF{nlist}-PQ{pq_m} nprobe{min(8, nlist)}",
                     IndexSettings("ivf_pq", nlist=nlist, nprobe=min(8, nlist), pq_m=pq_m))]
        rows, cache = [], {}
        for i, (label, s) in enumerate(configs):
            if progress is not None:
                progress(i / len(configs), f"Measuring {label}")
            key = s.key()
            if key not in cache:
                cache[key] = si.build_index(x, s)
            built = cache[key]
            built.settings.ef_search, built.settings.nprobe = s.ef_search, min(s.nprobe, built.settings.nlist)
            si.apply_query_params(built.index, built.settings)
            row = si.measure(built, x, k=recall_k)
            row["label"] = label
            rows.append(row)
        return speed.fastest_claim(rows)

    # ------------------------------------------------------------------ map
    def map_data(self, session_id: str, query_vector: np.ndarray | None = None,
                 neighbour_ids: list[int] | None = None, max_points: int = MAP_MAX_POINTS,
                 seed: int = 0) -> dict:
        """2-D PCA projection of the corpus (downsampled), the query and its neighbours."""
        entry = self.current(session_id)
        if entry is None:
            raise InputError("No index in this session yet: build one first.")
        with entry.lock:
            if entry.pca is None:
                entry.pca = pca_2d(entry.vectors)
            pca = entry.pca
        coords = pca["coords"]
        n = len(coords)
        neighbour_ids = [int(i) for i in (neighbour_ids or []) if 0 <= int(i) < n]
        if n > max_points:
            rng = np.random.default_rng(seed)
            idx = np.sort(rng.choice(n, size=max_points, replace=False))
        else:
            idx = np.arange(n)
        out = {
            "method": "PCA",
            "explained_variance": pca["explained"],
            "dims": int(entry.vectors.shape[1]),
            "total_points": n,
            "shown_points": int(len(idx)),
            "downsampled": bool(n > max_points),
            "ids": idx.tolist(),
            "x": coords[idx, 0].round(4).tolist(),
            "y": coords[idx, 1].round(4).tolist(),
            "titles": [entry.corpus.passages[i].title for i in idx.tolist()],
            "neighbours": [{"id": i, "x": float(coords[i, 0]), "y": float(coords[i, 1]),
                            "title": entry.corpus.passages[i].title} for i in neighbour_ids],
            "query": None,
        }
        if query_vector is not None:
            q = (np.asarray(query_vector, dtype=np.float32).reshape(1, -1) - pca["mean"]) @ pca["components"].T
            out["query"] = {"x": float(q[0, 0]), "y": float(q[0, 1])}
        return out


def embedding_dim(embedder: Embedder) -> int:
    """The embedder's output size, known before embedding (for the auto index choice)."""
    config = getattr(embedder.model, "config", None)
    return int(getattr(config, "hidden_size", 0) or 384)


def _apply(entry: IndexEntry, q: tuple) -> None:
    entry.built.settings.ef_search, entry.built.settings.nprobe = q
    si.apply_query_params(entry.built.index, entry.built.settings)


SERVICE = ProcessWide(lambda: SearchService(get_settings().cache_dir, **store_settings()))


def get_service() -> SearchService:
    """The process-wide service, on the configured cache dir."""
    return SERVICE.get()

