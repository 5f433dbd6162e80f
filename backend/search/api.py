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

import os

import numpy as np

from backend.runtime import budget
from backend import hub
from backend.runtime import config
from backend.engines.server import chat as remote_chat
from backend.engines.server import generation as remote
from backend.hub import server_models
from backend.runtime.device import gpu_task
from backend.engines.embedding.vectors import embed_texts
from backend.runtime.errors import InputError
from backend.runtime.plan import Plan
from backend.search import chunked_build as bounds
from backend.search import corpora
from backend.search import score_meaning
from backend.search.embedders import EMBEDDER_ROLES, ENGLISH
from backend.search.index import AUTO, INDEX_KINDS, IndexSettings
from backend.search.retrieval import ask_passages
from backend.search.reader import (
    MAX_ANSWER_TOKENS, check_answer, check_question, generative_answer, read, span_reader_answer,
)
from backend.search.trust import which_to_trust
from backend.search.service import BUILTIN_CORPORA, MAX_K, Embedder, ProgressFn, get_service
from backend.runtime.validation import as_bool, as_int, check_text, one_of, opt_text, kind

CORPUS_SOURCES = BUILTIN_CORPORA + ("upload", "paste")
ASK_MAX_PASSAGES = 5  # the reader's prompt (or its span search) stays short
EMBED_CHUNK = 64  # texts per GPU call: a few seconds of work on 2 shared cores (256 default passages took ~20 s, past the step the budget must end within), then progress and the lease
TEXT_FIELD_GUESSES = ("text", "body", "content", "passage")
TITLE_FIELD_GUESSES = ("title", "name", "heading")
MIN_WORDS, MAX_WORDS = 10, 1000  # passage length bounds (words)


def _quiet(fraction: float, desc: str) -> None:
    pass


# ----------------------------------------------------------------------------- model work (GPU)
@gpu_task(duration=60)
def _embed_chunk(texts: list[str], batch_size: int, role: str = "embedder") -> np.ndarray:
    lm = hub.load(role)
    return embed_texts(texts, lm.model, lm.tokenizer, batch_size=batch_size)


def _generative_role() -> str:
    """The role that writes Ask the corpus's answer: `qa` when a decoder serves it; where the reader
    trained here serves `qa` (an encoder), the instruct decoder still writes the generative answer."""
    return "decoder" if hub.get_hub().resolve("qa").method == config.METHOD_FINETUNED else "qa"


@gpu_task(duration=120)
def _read_passages(question: str, passages: list[dict]) -> dict:
    lm = hub.load(_generative_role())
    return read(lm.model, lm.tokenizer, lm.method, question, passages)


@gpu_task(duration=60)
def _extractive(question: str, passages: list[dict]) -> dict | None:
    """Beside the generative answer: the reader trained here over the same passages (chapter 7's
    retriever-reader), adapted to the glossary (backend.search.adapted), when it serves the `qa` role;
    None otherwise."""
    from backend.search.adapted import adapted_reader

    if not passages or hub.get_hub().resolve("qa").method != config.METHOD_FINETUNED:
        return None
    model, tokenizer, about, notice = adapted_reader(hub.load("qa"))
    out = span_reader_answer(model, tokenizer, question, passages)
    return {**out, "model": about, **({"notice": notice} if notice else {})}


def evaluate_reader(progress: ProgressFn | None = None) -> dict:
    """Chapter 7's evaluation on the glossary QA set (backend.search.reader_eval): retriever recall@k,
    the reader trained here on the gold passages, and end to end over the top-k retrieved."""
    if hub.get_hub().resolve("qa").method != config.METHOD_FINETUNED:
        raise InputError("The retriever-reader evaluation reads with the reader trained here, which serves the "
                         "local profile's QA role; this app's QA role is another model.")
    key = (repr(hub.get_hub().resolve("embedder")), repr(hub.get_hub().resolve("qa")), _questions_stamp())
    if key in _EVALUATIONS:  # the same models on the same questions give the same numbers: said once
        return {**_EVALUATIONS[key], "cached": True}
    say = progress or _quiet
    say(0.05, "Loading the embedder and the reader (first use only)")
    out = _evaluate_reader(say)
    _EVALUATIONS[key] = out
    return {**out, "cached": False}


_EVALUATIONS: dict[tuple, dict] = {}  # (embedder, reader, question file) -> the evaluation


def _questions_stamp() -> tuple:
    from backend.search import reader_eval

    st = os.stat(reader_eval.QA_FILE)
    return st.st_mtime_ns, st.st_size


@gpu_task(duration=120)
def _evaluate_reader(say: ProgressFn) -> dict:
    import json

    from backend.engines.qa import reader as span_reader
    from backend.search import reader_eval

    emb, lm = hub.load("embedder"), hub.load("qa")
    with open(corpora.GLOSSARY_PATH, encoding="utf-8") as f:
        passages = [json.loads(line) for line in f if line.strip()]

    reads: dict[tuple[str, str], dict] = {}

    def read(question: str, text: str) -> dict:
        """Each (question, passage) read once: the gold passage and the top 1, 3 and 5 overlap."""
        if (question, text) not in reads:
            reads[(question, text)] = span_reader.answer(lm.model, lm.tokenizer, question, text, top_n=1)
        return reads[(question, text)]

    def read_one(question: str, text: str) -> str:
        out = read(question, text)
        return "" if out["no_answer"] or not out["answers"] else out["answers"][0]["answer"]

    out = reader_eval.evaluate(passages, reader_eval.load_questions(),
                               lambda texts: embed_texts(texts, emb.model, emb.tokenizer), read_one,
                               lambda q, ps: span_reader_answer(lm.model, lm.tokenizer, q, ps, read=read)["answer"],
                               say=say)
    return {**out, "retriever_model": emb.describe(), "reader_model": lm.describe()}


class HubEmbedder(Embedder):
    """The hub's embedding role, run chunk by chunk inside GPU tasks; progress is told between."""

    def embed(self, texts, progress=None) -> np.ndarray:
        # Chunks, the measured rate, the estimate and the budget checks: backend.search.chunked_build.
        role = EMBEDDER_ROLES[self.choice]
        vectors, self.plan = bounds.embed_in_chunks(texts, lambda chunk: _embed_chunk(chunk, self.batch_size, role),
                                                    EMBED_CHUNK, progress, getattr(self, "say", None))
        return vectors


def load_embedder(progress: ProgressFn | None = None, embedder: str = ENGLISH) -> Embedder:
    """The chosen embedding role from the hub ("minilm": `embedder`, "multilingual": the e5 encoder),
    keyed by its checkpoint (for scripts and benchmarks).

    Loaded here, in the app's process, so that every GPU worker forked later inherits it."""
    choice = one_of("embedder", embedder, tuple(EMBEDDER_ROLES), default=ENGLISH)
    lm = hub.load(EMBEDDER_ROLES[choice], progress=progress)
    return HubEmbedder(lm.model, lm.tokenizer, lm.checkpoint, lm.describe(), choice=choice)


# ----------------------------------------------------------------------------- model-free
def load_corpus(corpus: str = "glossary", file: str | None = None, paste: str = "",
                text_field: str | None = None, title_field: str | None = None,
                keep_good: bool = False, max_words: int = corpora.DEFAULT_CHUNK_WORDS,
                overlap: int = corpora.DEFAULT_OVERLAP_WORDS,
                progress: ProgressFn | None = None, session_id: str | None = None) -> tuple[corpora.Corpus, bool]:
    """-> (corpus, shared?): built-in corpora are shared by every session, the rest private.

    Every parameter is checked here and named as the `/build_index` API lists it. An uploaded
    file is deleted from the upload folder once read; its bytes stay in the session's memory
    (only the last upload) so the same session can rebuild with other settings."""
    service = get_service()
    corpus = one_of("choice", corpus, CORPUS_SOURCES, default="glossary")
    paste = check_text(paste, "paste")
    if file is not None and file != "" and not isinstance(file, str):
        raise InputError("file must be an uploaded file: in gradio_client, pass handle_file(path).")
    opts = corpora.UploadOptions(text_field=opt_text("text_field", text_field),
                           title_field=opt_text("title_field", title_field),
                           keep_good_lines=as_bool("keep_good", keep_good),
                           max_words=as_int("max_words", max_words, lo=MIN_WORDS, hi=MAX_WORDS),
                           overlap=as_int("overlap", overlap, lo=0, hi=MAX_WORDS - 1))
    if corpus in BUILTIN_CORPORA:
        return service.builtin_corpus(corpus, progress=progress), True
    if corpus == "upload":
        if file is None or file == "":
            raise InputError("No file uploaded: choose a .txt, .csv, .tsv or .jsonl file, "
                             "or pick another corpus.")
        data = service.recall_upload(session_id, file) if session_id and not os.path.exists(file) else None
        if data is None:
            data = corpora.read_upload(file, service.limits)
            if session_id:
                service.remember_upload(session_id, file, data)
        return corpora.corpus_from_bytes(data, file, opts, service.limits), False
    return corpora.corpus_from_paste(paste, opts, service.limits), False


def index_settings(index_type=AUTO, m=32, efc=40, efs=16, nlist=100, nprobe=8, pq_m=16,
                   pq_bits=8) -> IndexSettings:
    """The index knobs as `/build_index` names them -> IndexSettings; FAISS's ranges sized for a
    CPU box (an HNSW of M=256 or 65,536 IVF lists would only burn the shared machine).
    "auto" (the default) picks Flat or HNSW by corpus size (index.choose_index)."""
    kind = one_of("index_type", index_type, (AUTO,) + tuple(INDEX_KINDS), default=AUTO)
    return IndexSettings(kind=kind, hnsw_m=as_int("m", m, lo=2, hi=128),
                         ef_construction=as_int("efc", efc, lo=1, hi=1024),
                         ef_search=as_int("efs", efs, lo=1, hi=1024),
                         nlist=as_int("nlist", nlist, lo=1, hi=16384),
                         nprobe=as_int("nprobe", nprobe, lo=1, hi=16384),
                         pq_m=as_int("pq_m", pq_m, lo=1, hi=384),
                         pq_bits=as_int("pq_bits", pq_bits, lo=1, hi=12))


def prepare_cache() -> None:
    """At start-up: the service on its cache dir, leftovers of crashed writes removed."""
    get_service()


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
            text = corpora.decode_bytes(f.read(1_000_000), "the file")
    except InputError:
        return None
    if ext in ("csv", "tsv"):
        cols = corpora.table_columns(text.split("\n", 1)[0] + "\n", "," if ext == "csv" else "\t")
    elif ext == "jsonl":
        cols = corpora.jsonl_fields(text)
    else:
        return none
    guess = next((c for c in cols if c.lower() in TEXT_FIELD_GUESSES), cols[0] if cols else None)
    title = next((c for c in cols if c.lower() in TITLE_FIELD_GUESSES), None)
    return {"table": True, "columns": cols, "text": guess, "title": title}


def held_index(session_id: str) -> dict | None:
    """What the session's current index holds, for a tab that must show it (after a refused or
    failed build the old index stays) -> {"source": glossary|docstrings|upload|paste, "corpus",
    "count", "index_type"}; None when the session has no index yet."""
    entry = get_service().current(session_id) if session_id else None
    if entry is None:
        return None
    name = entry.corpus.name
    if entry.shared and name in BUILTIN_CORPORA:
        source = name
    else:
        source = "paste" if name == corpora.PASTE_NAME else "upload"
    return {"source": source, "corpus": name, "count": len(entry.corpus),
            "index_type": entry.stats.get("index_type", ""), "embedder": entry.embedder}


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
    raise InputError(f"Index settings must be a dict, got {kind(settings)}.")


# ----------------------------------------------------------------------------- entry points
# They run in the app's process (sessions live here); models run only in the GPU tasks above.
def build_index(session_id: str, corpus: str = "glossary", file: str | None = None,
                paste: str = "", text_field: str | None = None, title_field: str | None = None,
                keep_good: bool = False, max_words: int = corpora.DEFAULT_CHUNK_WORDS,
                overlap: int = corpora.DEFAULT_OVERLAP_WORDS,
                settings: IndexSettings | dict | None = None,
                progress: ProgressFn | None = None, embedder: str = ENGLISH) -> dict:
    """Embed + index a corpus and make it the session's current index -> its stats.

    `embedder`: "minilm" (English, the default) or "multilingual" (multilingual-e5-small: a German,
    French or Italian question finds an English passage); each has its own cached index.
    The corpus is read before the embedder loads, so a bad upload fails fast. A private corpus
    is de-duplicated and held to the public passage cap; the build runs under the request's
    time budget and tells the estimated time first (backend.search.chunked_build)."""
    say = progress or _quiet
    say(0.0, "Reading the corpus")
    with budget.scope():
        source, shared = load_corpus(corpus, file, paste, text_field, title_field, keep_good,
                                     max_words, overlap, progress=progress, session_id=session_id)
        source = bounds.prepare(source, shared)
        index_settings = _index_settings(settings)
        emb = load_embedder(progress, embedder)
        teller = bounds.Teller(progress)
        emb.say = teller.say
        stats = get_service().build(session_id, source, index_settings, emb, shared=shared,
                                    progress=teller)
    stats["embedding"] = getattr(emb, "plan", None)  # passages, estimated_s, rate_per_s, seconds; None if cached
    return stats


AUTO_CORPUS = "glossary"  # what a first search with no index searches (built in ~0.3 s)


def ensure_index(session_id: str, progress: ProgressFn | None = None, embedder: str = ENGLISH) -> dict | None:
    """Give a session with no index the glossary (auto index choice) -> its build stats, or None
    when the session already has an index (which is left as it is)."""
    service = get_service()
    if service.current(session_id) is not None:
        return None
    gone = service.gone_message(session_id)
    if gone:  # their own index was evicted: say so, never answer silently from the glossary
        raise InputError(gone)
    return build_index(session_id, AUTO_CORPUS, progress=progress, embedder=embedder)


def search(session_id: str, query: str, k: int = 5, embedder: str | None = None) -> dict:
    """Top-k passages of the session's index, best first, plus the corpus map (PCA) for them.

    The query is embedded by the model that built the index. A session with no index yet gets the
    glossary (auto index choice) built first, with `embedder` (default "minilm"), so a first search
    answers instead of asking for a build; the result's notes say so."""
    service = get_service()
    if service.current(session_id) is None:
        check_text(query, "query")  # a bad query fails before any build
        as_int("k", k, lo=1)
    asked = None if embedder in (None, "") else one_of("embedder", embedder, tuple(EMBEDDER_ROLES))
    built = ensure_index(session_id, embedder=asked or ENGLISH)
    emb = load_embedder(embedder=_index_embedder(session_id, asked))
    res = service.search(session_id, query, k, emb)
    out = {key: v for key, v in res.items() if not key.startswith("_")}
    if built is not None:
        out["auto_built"] = {key: built[key] for key in ("corpus", "count", "index_type", "index_choice",
                                                         "build_s", "embed_s")}
        out["notes"] = [f"No index in this session yet: built the {AUTO_CORPUS} index "
                        f"({built['count']:,} passages, {built['index_type']}) first."] + out["notes"]
    out["map"] = service.map_data(session_id, res["_query_vector"],
                                  [r["id"] for r in res["results"]])
    entry = service.current(session_id)
    out["score_meaning"] = score_meaning.context(getattr(entry, "vectors", None), res["_query_vector"],
                                                 [r["score"] for r in res["results"]])
    return out


def _index_embedder(session_id: str, asked: str | None = None) -> str:
    """The embedder that built the session's index: its queries must be embedded by the same model."""
    entry = get_service().current(session_id)
    held = entry.embedder if entry is not None else ENGLISH
    if asked not in (None, "", held):
        raise InputError(f"This session's index was built with embedder '{held}'; search it with that one, "
                         f"or build the index again with embedder='{asked}'.")
    return held


def ask(session_id: str, question: str, k: int = 5, progress: ProgressFn | None = None) -> dict:
    """Retriever-reader: up to 5 passages (dense + BM25: backend.search.retrieval), the `qa` role answers."""
    say = progress or _quiet
    question = check_question(question)
    k = as_int("k", k, lo=1, hi=MAX_K)
    say(0.1, "Retrieving passages")
    emb = load_embedder(embedder=_index_embedder(session_id))
    passages, retrieval = ask_passages(get_service(), session_id, question, min(k, ASK_MAX_PASSAGES), emb)
    out = _read_on_server(question, passages, say)
    if "answer" not in out:
        say(0.3, "Loading the reader (first use only)")
        lm = hub.load(_generative_role())
        say(0.5, "Reading the passages")
        note = out.get("note")
        out = _read_passages(question, passages)
        out.update({"model": lm.describe(), "engine": remote.in_process(note)})
        if note:
            out.setdefault("notices", []).insert(0, note)
    out.setdefault("notices", [])
    if out.get("reader_method") == config.METHOD_INSTRUCT:
        # The `qa` role's own provenance describes how Pipelines QA uses the decoder (span copying);
        # here the same decoder is prompted and writes free text: say that, not the role's method.
        out["model"] = {**out["model"], "method": config.METHOD_INSTRUCT,
                        "note": config.method_text(config.METHOD_INSTRUCT, "extractive QA")}
    if out.get("finish_reason") in _CUT:
        out["notices"].insert(0, f"The answer was {_CUT[out['finish_reason']]}: it is incomplete.")
    elif out.get("finish_reason") == "length":
        out["notices"].append(f"The generated answer stopped at its {MAX_ANSWER_TOKENS}-token limit: it may end "
                              "mid-sentence.")
    if out.get("reader_method") != "model":  # a generated answer: checked against what it was given
        out["support"] = check_answer(out.get("answer") or "", question, passages)
    extractive = _extractive(question, passages)
    if extractive is not None:
        out["extractive"] = extractive
        if extractive.get("notice"):
            out["notices"].append(extractive["notice"])
    elif out.get("reader_method") != "model":
        out["extractive_absent"] = (f"this app's QA role is served by {hub.get_hub().resolve('qa').method}, not by an "
                                    "extractive reader with a span head")
    out.update({"question": question, "passages": passages, "retrieval": retrieval, "retriever_model": emb.describe})
    out["trust"] = (which_to_trust(out.get("extractive"), out.get("answer") or "", out.get("support"), passages)
                    if out.get("reader_method") != "model" else None)
    return out


_CUT = {"time budget": "stopped at the time budget", "stopped": "stopped by you", "memory budget": "stopped at the memory guard (TLAB_REQUEST_MEMORY_MB)"}


def reader_plan() -> Plan:
    """Where Ask's generative answer runs (`backend.runtime.plan.Plan`), decided once as the request
    joins the queue: the server gate of the role that writes it. No network, no model."""
    return server_models.plan_for(_generative_role())


def reader_on_server() -> bool:
    """Will the generation server write the reader's answer, as far as its last health check
    knows? No network and no model: the lanes ask it as a request joins the queue. The role is the
    one that writes the generative answer (`_generative_role`: the decoder where the reader trained
    here serves `qa`)."""
    plan = reader_plan()
    return plan.on_server and not plan.long


def _read_on_server(question: str, passages: list[dict], say: ProgressFn) -> dict:
    """The reader's reply from the generation server when it may write it (a decoder reader):
    the answer with `model` and `engine`; else {"note": why it runs here, or None}."""
    stand_in, note = server_models.server_model(_generative_role())
    if stand_in is None:
        return {"note": note}
    say(0.5, "Reading the passages (on the generation server)")
    try:
        out = generative_answer(None, None, question, passages, chat=lambda messages, n: remote_chat.chat(
            stand_in.server, stand_in.tokenizer, messages, n))
    except remote.ServerUnavailable as exc:
        return {"note": str(exc)}
    out.update({"model": stand_in.describe(), "engine": stand_in.server.info()})
    return out


def compare_indexes(session_id: str, k: int = 10, progress: ProgressFn | None = None) -> list[dict]:
    """Every index type over the session's stored vectors: build time, memory, latency, recall@k.

    No model runs (the vectors are already embedded), so no GPU is asked for."""
    k = as_int("k", k, lo=1, hi=MAX_K)
    return get_service().sweep(session_id, recall_k=k, progress=progress)
