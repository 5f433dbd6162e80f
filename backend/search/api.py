"""Role-level entry points of the Semantic search tab (and of scripts).

Each takes plain values and the caller's session id, asks the model hub itself for the
`embedder` (and, to answer from the corpus, the `qa` reader), and returns plain JSON-able
data. Indexes live in the process-wide `SearchService`, one current index per session, so
the tab never holds a model or an index.

ZeroGPU runs a `gpu_task` in a forked worker and only its return value comes back. So the
entry points themselves run in the app's process, where the sessions and indexes live, and
only the stateless model work is wrapped: embedding a chunk of texts, and reading passages.
Between chunks a long build gives the GPU (and the model lane) back.
"""

from __future__ import annotations

import numpy as np

from backend import models
from backend.embedding import embed_texts
from backend.errors import InputError
from backend.search import corpora as C
from backend.search.index import IndexSettings
from backend.search.reader import check_question, read
from backend.search.service import BUILTIN_CORPORA, Embedder, ProgressFn, get_service
from backend.validation import as_int

CORPUS_SOURCES = BUILTIN_CORPORA + ("upload", "paste")
ASK_MAX_PASSAGES = 5  # the reader's prompt (or its span search) stays short
EMBED_CHUNK = 256  # texts per GPU call: a second or two of work, then progress and the lease
TEXT_FIELD_GUESSES = ("text", "body", "content", "passage")
TITLE_FIELD_GUESSES = ("title", "name", "heading")


def _quiet(fraction: float, desc: str) -> None:
    pass


# ----------------------------------------------------------------------------- model work (GPU)
@models.gpu_task(duration=60)
def _embed_chunk(texts: list[str], batch_size: int) -> np.ndarray:
    lm = models.load("embedder")
    return embed_texts(texts, lm.model, lm.tokenizer, batch_size=batch_size)


@models.gpu_task(duration=120)
def _read_passages(question: str, passages: list[dict]) -> dict:
    lm = models.load("qa")
    return read(lm.model, lm.tokenizer, lm.method, question, passages)


class HubEmbedder(Embedder):
    """The hub's `embedder`, run chunk by chunk inside GPU tasks; progress is told between."""

    def embed(self, texts, progress=None) -> np.ndarray:
        texts = list(texts)
        chunks = [texts[i:i + EMBED_CHUNK] for i in range(0, len(texts), EMBED_CHUNK)] or [texts]
        out = []
        for chunk in chunks:
            out.append(_embed_chunk(chunk, self.batch_size))
            if progress is not None and texts:
                progress(sum(len(v) for v in out), len(texts))
        return np.concatenate(out)


def load_embedder(progress: ProgressFn | None = None) -> Embedder:
    """The `embedder` role from the hub, keyed by its checkpoint (for scripts and benchmarks).

    Loaded here, in the app's process, so that every GPU worker forked later inherits it."""
    lm = models.load("embedder", progress=progress)
    return HubEmbedder(lm.model, lm.tokenizer, lm.checkpoint, lm.describe())


# ----------------------------------------------------------------------------- model-free
def load_corpus(corpus: str = "glossary", file: str | None = None, paste: str = "",
                text_field: str | None = None, title_field: str | None = None,
                keep_good: bool = False, max_words: int = C.DEFAULT_CHUNK_WORDS,
                overlap: int = C.DEFAULT_OVERLAP_WORDS,
                progress: ProgressFn | None = None) -> tuple[C.Corpus, bool]:
    """-> (corpus, shared?): built-in corpora are shared by every session, the rest private."""
    service = get_service()
    if corpus in BUILTIN_CORPORA:
        return service.builtin_corpus(corpus, progress=progress), True
    opts = C.UploadOptions(text_field=(text_field or "").strip() or None,
                           title_field=(title_field or "").strip() or None,
                           keep_good_lines=bool(keep_good),
                           max_words=as_int("max_words", max_words),
                           overlap=as_int("overlap", overlap))
    if corpus == "upload":
        if not file:
            raise InputError("No file uploaded: choose a .txt, .csv, .tsv or .jsonl file, "
                             "or pick another corpus.")
        return C.corpus_from_file(file, opts, service.limits), False
    if corpus == "paste":
        return C.corpus_from_paste(paste or "", opts, service.limits), False
    raise InputError(f"Unknown corpus '{corpus}'. Choose one of: {', '.join(CORPUS_SOURCES)}.")


def inspect_upload(path: str | None) -> dict | None:
    """The columns / fields of an uploaded table or JSONL, with a guess at the text and title.

    -> {"table": bool, "columns": [...], "text": guess, "title": guess}; None when the file
    cannot be decoded (the tab then leaves its choices as they are)."""
    none = {"table": False, "columns": [], "text": None, "title": None}
    if not path:
        return none
    ext = path.lower().rsplit(".", 1)[-1]
    try:
        with open(path, "rb") as f:
            text = C.decode_bytes(f.read(1_000_000), "the file")
    except InputError:
        return None
    if ext in ("csv", "tsv"):
        cols = C.table_columns(text.split("\n", 1)[0] + "\n", "," if ext == "csv" else "\t")
    elif ext == "jsonl":
        cols = C.jsonl_fields(text)
    else:
        return none
    guess = next((c for c in cols if c.lower() in TEXT_FIELD_GUESSES), cols[0] if cols else None)
    title = next((c for c in cols if c.lower() in TITLE_FIELD_GUESSES), None)
    return {"table": True, "columns": cols, "text": guess, "title": title}


def drop_session(session_id: str) -> None:
    """Forget a session's index (a closed page); idle eviction covers the rest."""
    if session_id:
        get_service().drop_session(session_id)


def _index_settings(settings: IndexSettings | dict | None) -> IndexSettings:
    if settings is None:
        return IndexSettings()
    if isinstance(settings, IndexSettings):
        return settings
    if isinstance(settings, dict):
        unknown = sorted(set(settings) - set(IndexSettings.__dataclass_fields__))
        if unknown:
            raise InputError(f"Unknown index setting(s): {', '.join(unknown)}. Known: "
                             f"{', '.join(IndexSettings.__dataclass_fields__)}.")
        return IndexSettings(**settings)
    raise InputError(f"Index settings must be a dict, got {type(settings).__name__}.")


# ----------------------------------------------------------------------------- entry points
# They run in the app's process (sessions live here); models run only in the GPU tasks above.
def build_index(session_id: str, corpus: str = "glossary", file: str | None = None,
                paste: str = "", text_field: str | None = None, title_field: str | None = None,
                keep_good: bool = False, max_words: int = C.DEFAULT_CHUNK_WORDS,
                overlap: int = C.DEFAULT_OVERLAP_WORDS,
                settings: IndexSettings | dict | None = None,
                progress: ProgressFn | None = None) -> dict:
    """Embed + index a corpus and make it the session's current index -> its stats.

    The corpus is read before the embedder loads, so a bad upload fails fast."""
    say = progress or _quiet
    say(0.0, "Reading the corpus")
    source, shared = load_corpus(corpus, file, paste, text_field, title_field, keep_good,
                                 max_words, overlap, progress=progress)
    index_settings = _index_settings(settings)
    emb = load_embedder(progress)
    return get_service().build(session_id, source, index_settings, emb, shared=shared,
                               progress=progress)


def search(session_id: str, query: str, k: int = 5) -> dict:
    """Top-k passages of the session's index, best first, plus the corpus map (PCA) for them."""
    emb = load_embedder()
    service = get_service()
    res = service.search(session_id, query, k, emb)
    out = {key: v for key, v in res.items() if not key.startswith("_")}
    out["map"] = service.map_data(session_id, res["_query_vector"],
                                  [r["id"] for r in res["results"]])
    return out


def ask(session_id: str, question: str, k: int = 5, progress: ProgressFn | None = None) -> dict:
    """Retriever-reader: the embedder finds up to 5 passages, the `qa` role answers from them."""
    say = progress or _quiet
    question = check_question(question)
    k = as_int("k", k)
    say(0.1, "Retrieving passages")
    emb = load_embedder()
    passages = get_service().search(session_id, question, min(k, ASK_MAX_PASSAGES),
                                    emb)["results"]
    say(0.3, "Loading the reader (first use only)")
    lm = models.load("qa")
    say(0.5, "Reading the passages")
    out = _read_passages(question, passages)
    out.update({"question": question, "passages": passages, "model": lm.describe(),
                "retriever_model": emb.describe})
    return out


def compare_indexes(session_id: str, k: int = 10, progress: ProgressFn | None = None) -> list[dict]:
    """Every index type over the session's stored vectors: build time, memory, latency, recall@k.

    No model runs (the vectors are already embedded), so no GPU is asked for."""
    k = as_int("k", k)
    if k < 1:
        raise InputError("k must be at least 1.")
    return get_service().sweep(session_id, recall_k=k, progress=progress)
