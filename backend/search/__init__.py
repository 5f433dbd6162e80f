"""Semantic search: FAISS indexes over corpora, kept per session, and a retriever-reader.

A tab or a script does `from backend import search` and calls the entry points below; the
model-level pieces (service, index, corpora, reader) stay importable for tests.
"""

from backend.search.api import (
    ASK_MAX_PASSAGES,
    AUTO_CORPUS,
    CORPUS_SOURCES,
    ask,
    build_index,
    compare_indexes,
    drop_session,
    ensure_index,
    evaluate_reader,
    held_index,
    index_settings,
    inspect_upload,
    load_corpus,
    prepare_cache,
    reader_on_server,
    reader_plan,
    search,
)
from backend.search.adapted import stored_table as reader_adaptation
from backend.search.embedders import EMBEDDER_LABELS, EMBEDDER_ROLES
from backend.search.corpora import DEFAULT_CHUNK_WORDS, DEFAULT_OVERLAP_WORDS, SUPPORTED_EXTENSIONS
from backend.search.index import AUTO, INDEX_KINDS, INDEX_LABELS, IndexSettings
from backend.search.service import BUILTIN_CORPORA

__all__ = [
    "AUTO",
    "ASK_MAX_PASSAGES",
    "AUTO_CORPUS",
    "BUILTIN_CORPORA",
    "CORPUS_SOURCES",
    "DEFAULT_CHUNK_WORDS",
    "DEFAULT_OVERLAP_WORDS",
    "EMBEDDER_LABELS",
    "EMBEDDER_ROLES",
    "INDEX_KINDS",
    "INDEX_LABELS",
    "IndexSettings",
    "SUPPORTED_EXTENSIONS",
    "ask",
    "build_index",
    "compare_indexes",
    "drop_session",
    "ensure_index",
    "held_index",
    "index_settings",
    "inspect_upload",
    "load_corpus",
    "prepare_cache",
    "reader_adaptation",
    "reader_on_server",
    "reader_plan",
    "search",
]
