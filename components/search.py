"""The Semantic search tab: build a FAISS index over a corpus, search it, map it, ask it.

Every index lives in the caller's Gradio session (`gr.Request.session_hash`: one per browser
page load, one per gradio_client Client), so one person's uploads never show up in another
person's results. Built-in corpora are shared and built once.
"""

from __future__ import annotations

import html

import gradio as gr

from backend.search import corpora as C
from backend.search import service as S
from backend.search.index import INDEX_LABELS, IndexSettings
from components.common import MODEL_QUEUE, model_badge, user_errors
from components.search_plots import map_figure, tradeoff_figure

CORPUS_CHOICES = [("Glossary of the book's topics (built in)", "glossary"),
                  ("API docs: docstrings of installed libraries (built in)", "docstrings"),
                  ("Upload a file (.txt, .csv, .tsv, .jsonl)", "upload"),
                  ("Paste text", "paste")]
INDEX_CHOICES = [(label, kind) for kind, label in INDEX_LABELS.items()]
EXAMPLE_QUERIES = ["how do I keep a model from repeating itself when generating?",
                   "make a model smaller and faster for production",
                   "split words into pieces"]


def _session(request: gr.Request | None) -> str:
    sid = getattr(request, "session_hash", None) if request is not None else None
    if not sid:
        raise gr.Error("No session: the search tab keeps your index per browser session; "
                       "reload the page.")
    return sid


def _settings(index_type, m, efc, efs, nlist, nprobe, pq_m, pq_bits) -> IndexSettings:
    return IndexSettings(kind=index_type or "flat", hnsw_m=m, ef_construction=efc, ef_search=efs,
                         nlist=nlist, nprobe=nprobe, pq_m=pq_m, pq_bits=pq_bits)


def _file_path(file) -> str | None:
    if file is None:
        return None
    if isinstance(file, str):
        return file
    if isinstance(file, dict):
        return file.get("path") or file.get("name")
    return getattr(file, "name", None) or getattr(file, "path", None)


def load_corpus(choice, file, paste, text_field, title_field, keep_good, max_words, overlap,
                progress=None):
    """-> (corpus, shared?) for the chosen source."""
    service = S.get_service()
    if choice in S.BUILTIN_CORPORA:
        return service.builtin_corpus(choice, progress=progress), True
    opts = C.UploadOptions(text_field=(text_field or "").strip() or None,
                           title_field=(title_field or "").strip() or None,
                           keep_good_lines=bool(keep_good), max_words=int(max_words),
                           overlap=int(overlap))
    if choice == "upload":
        path = _file_path(file)
        if not path:
            raise C.InputError("No file uploaded: choose a .txt, .csv, .tsv or .jsonl file, "
                               "or pick another corpus.")
        return C.corpus_from_file(path, opts, service.limits), False
    if choice == "paste":
        return C.corpus_from_paste(paste or "", opts, service.limits), False
    raise C.InputError(f"Unknown corpus '{choice}'. Choose one of: "
                       f"{', '.join(v for _, v in CORPUS_CHOICES)}.")


def stats_markdown(st: dict) -> str:
    s = st["settings"]
    knobs = {"Flat (exact)": "", "HNSW": f"M={s['hnsw_m']}, efConstruction={s['ef_construction']}, efSearch={s['ef_search']}",
             "IVF-Flat": f"nlist={s['nlist']}, nprobe={s['nprobe']}",
             "IVF-PQ": f"nlist={s['nlist']}, nprobe={s['nprobe']}, m={s['pq_m']}, bits={s['pq_bits']}"}[st["index_type"]]
    lines = [
        f"### {st['index_type']} index over **{html.escape(st['corpus'])}** {('(' + knobs + ')') if knobs else ''}",
        "| passages | dims | embed | build | index memory | query latency (median / p95) | recall@{k} vs exact |".format(k=st["recall_k"]),
        "|---|---|---|---|---|---|---|",
        f"| {st['count']:,} | {st['dims']} | "
        f"{'cached' if st['embeddings_from_cache'] else str(st['embed_s']) + ' s'} | "
        f"{'loaded in ' + str(st['load_s']) + ' s' if st['index_from_cache'] else str(st['build_s']) + ' s'} | "
        f"{st['memory_mb']:.2f} MB (vectors {st['vectors_mb']:.2f} MB) | "
        f"{st['query_ms_median']:.3f} / {st['query_ms_p95']:.3f} ms | {st['recall_at_k']:.3f} |",
    ]
    notes = list(st.get("corpus_notes", [])) + list(st.get("notes", []))
    if st.get("shared"):
        notes.append("Built-in corpus: this index is shared by all sessions and built once.")
    lines += [f"\n> {html.escape(n)}" for n in notes]
    return "\n".join(lines)


def results_html(res: dict) -> str:
    rows = []
    for r in res["results"]:
        width = max(0.0, min(1.0, r["score"])) * 100
        rows.append(
            f"<div class='tlab-hit' style='margin:6px 0;padding:6px 8px;border:1px solid #ddd;border-radius:6px'>"
            f"<div><b>#{r['rank']}</b> <span class='tlab-score'>{r['score']:.3f}</span> "
            f"<span style='display:inline-block;height:8px;width:{width:.0f}px;background:#e07b14;border-radius:3px'></span> "
            f"<b class='tlab-title'>{html.escape(r['title'])}</b></div>"
            f"<div class='tlab-text' style='font-size:0.92em'>{html.escape(r['text'])}</div></div>")
    t = res["timing_ms"]
    head = (f"<div><i>{len(res['results'])} of {res['count']:,} passages in "
            f"{html.escape(res['corpus'])} ({html.escape(res['index_type'])}); "
            f"encode {t['encode']:.1f} ms, search {t['search']:.2f} ms, total {t['total']:.1f} ms</i></div>")
    notes = "".join(f"<div><i>{html.escape(n)}</i></div>" for n in res["notes"])
    return f"<div id='tlab-search-results'>{head}{notes}{''.join(rows)}</div>"


def _public(res: dict) -> dict:
    return {k: v for k, v in res.items() if not k.startswith("_")}


# ------------------------------------------------------------------------- handlers
@user_errors
def build_index(choice, file, paste, text_field, title_field, keep_good, max_words, overlap,
                index_type, m, efc, efs, nlist, nprobe, pq_m, pq_bits,
                request: gr.Request, progress=gr.Progress()):
    sid = _session(request)
    cb = (lambda frac, desc: progress(frac, desc=desc))
    cb(0.0, "Reading the corpus")
    corpus, shared = load_corpus(choice, file, paste, text_field, title_field, keep_good,
                                 max_words, overlap, progress=cb)
    cb(0.05, "Loading the embedder (first use only)")
    emb = S.hub_embedder()
    settings = _settings(index_type, m, efc, efs, nlist, nprobe, pq_m, pq_bits)
    stats = S.get_service().build(sid, corpus, settings, emb, shared=shared, progress=cb)
    return stats_markdown(stats), stats, model_badge(stats["model"])


@user_errors
def search(query, k, request: gr.Request):
    sid = _session(request)
    emb = S.hub_embedder()
    service = S.get_service()
    res = service.search(sid, query, k, emb)
    m = service.map_data(sid, res["_query_vector"], [r["id"] for r in res["results"]])
    out = _public(res)
    out["map"] = {"method": m["method"], "query": m["query"], "neighbours": m["neighbours"],
                  "total_points": m["total_points"], "shown_points": m["shown_points"]}
    return results_html(res), map_figure(m), out, model_badge(res["model"])


@user_errors
def ask(question, k, request: gr.Request, progress=gr.Progress()):
    from backend import models
    from backend.search.reader import check_question, read

    sid = _session(request)
    question = check_question(question)
    progress(0.1, desc="Retrieving passages")
    emb = S.hub_embedder()
    res = S.get_service().search(sid, question, min(int(k), 5), emb)
    progress(0.3, desc="Loading the reader (first use only)")
    lm = models.get_hub().load("qa")
    progress(0.5, desc="Reading the passages")
    passages = res["results"]
    out = read(lm.model, lm.tokenizer, lm.method, question, passages)
    out.update({"question": question, "passages": passages, "model": lm.describe(),
                "retriever_model": emb.describe})
    how = ("an extractive QA model picked the answer span" if out["reader_method"] == "model"
           else "the instruct decoder was prompted with the passages (no extractive QA model "
                "offline); check its citations")
    cited = ", ".join(f"[{c}] {html.escape(passages[c - 1]['title'])}" for c in out["cited"])
    src = "" if out.get("citations_from", "reader") == "reader" else f" (by {out['citations_from']})"
    md = (f"**Answer:** {html.escape(out['answer']) or '(no answer)'}\n\n"
          f"**Cited passages{src}:** {cited or 'none'}\n\n*Reader: {how}.*")
    return md, out, model_badge(lm.describe())


@user_errors
def compare(k, request: gr.Request, progress=gr.Progress()):
    sid = _session(request)
    rows = S.get_service().sweep(sid, recall_k=int(k), progress=lambda f, d: progress(f, desc=d))
    table = "| index | build s | memory MB | latency ms (median) | recall@{k} |\n|---|---|---|---|---|\n".format(k=int(k))
    table += "\n".join(f"| {r['label']} | {r['build_s']:.3f} | {r['memory_mb']:.2f} | "
                       f"{r['query_ms_median']:.3f} | {r['recall_at_k']:.3f} |" for r in rows)
    return tradeoff_figure(rows), table, rows


def inspect_upload(file):
    """Fill the field dropdowns from an uploaded table / JSONL (no model, no API)."""
    path = _file_path(file)
    if not path:
        return gr.update(choices=[], value=None), gr.update(choices=[], value=None)
    ext = path.lower().rsplit(".", 1)[-1]
    try:
        with open(path, "rb") as f:
            text = C.decode_bytes(f.read(1_000_000), "the file")
    except C.InputError:
        return gr.update(), gr.update()
    if ext in ("csv", "tsv"):
        cols = C.table_columns(text.split("\n", 1)[0] + "\n", "," if ext == "csv" else "\t")
    elif ext == "jsonl":
        cols = C.jsonl_fields(text)
    else:
        return gr.update(choices=[], value=None), gr.update(choices=[], value=None)
    guess = next((c for c in cols if c.lower() in ("text", "body", "content", "passage")),
                 cols[0] if cols else None)
    tguess = next((c for c in cols if c.lower() in ("title", "name", "heading")), None)
    return (gr.update(choices=cols, value=guess),
            gr.update(choices=[""] + cols, value=tguess or ""))


def drop_session(request: gr.Request):
    """Closing the page frees that session's private index (idle eviction covers the rest)."""
    sid = getattr(request, "session_hash", None) if request is not None else None
    if sid:
        S.get_service().drop_session(sid)


# ------------------------------------------------------------------------- layout
def build() -> None:
    gr.Markdown(
        "## Semantic search with FAISS\n"
        "Embed a corpus with the **embedder** (mean pooling + L2 normalisation, so inner "
        "product = cosine), index it with FAISS, and search it by meaning. Compare index types: "
        "build time, memory, latency and recall against exact search. Your uploads stay in "
        "your session only.")
    with gr.Row():
        with gr.Column(scale=1):
            corpus = gr.Radio(CORPUS_CHOICES, value="glossary", label="Corpus",
                              elem_id="search-corpus")
            file = gr.File(label="Upload", file_types=[".txt", ".csv", ".tsv", ".jsonl"],
                           type="filepath", value=None, elem_id="search-file")
            paste = gr.Textbox(label="Or paste documents (one per line, or separated by blank "
                               "lines)", lines=4, value="", elem_id="search-paste")
            with gr.Row():
                text_field = gr.Dropdown([], value="", label="Text column / field", allow_custom_value=True,
                                         info="CSV/TSV column or JSONL field")
                title_field = gr.Dropdown([], value="", label="Title column / field (optional)",
                                          allow_custom_value=True)
            keep_good = gr.Checkbox(False, label="JSONL: keep the good lines if some are broken")
            with gr.Accordion("Passages", open=False):
                max_words = gr.Slider(20, 400, value=C.DEFAULT_CHUNK_WORDS, step=10,
                                      label="Passage length (words)")
                overlap = gr.Slider(0, 100, value=C.DEFAULT_OVERLAP_WORDS, step=5,
                                    label="Overlap between passages (words)")
            index_type = gr.Dropdown(INDEX_CHOICES, value="flat", label="Index type",
                                     elem_id="search-index-type")
            with gr.Accordion("Index knobs", open=False):
                m = gr.Slider(4, 64, value=32, step=4, label="HNSW M (neighbours per node)")
                efc = gr.Slider(8, 400, value=40, step=8, label="HNSW efConstruction")
                efs = gr.Slider(1, 512, value=16, step=1, label="HNSW efSearch (query time)")
                nlist = gr.Slider(1, 4096, value=100, step=1, label="IVF nlist (lists)")
                nprobe = gr.Slider(1, 256, value=8, step=1, label="IVF nprobe (query time)")
                pq_m = gr.Slider(1, 96, value=16, step=1, label="PQ sub-quantizers m (divides 384)")
                pq_bits = gr.Slider(4, 12, value=8, step=1, label="PQ bits per code")
            build_btn = gr.Button("Build index", variant="primary", elem_id="search-build")
        with gr.Column(scale=2):
            stats_md = gr.Markdown(elem_id="search-stats")
            with gr.Accordion("Index stats (JSON)", open=False):
                stats_json = gr.JSON(label="stats")
            with gr.Row():
                query = gr.Textbox(label="Query", scale=4, elem_id="search-query",
                                   placeholder=EXAMPLE_QUERIES[0])
                k = gr.Slider(1, 50, value=5, step=1, label="k", scale=1)
            search_btn = gr.Button("Search", variant="primary", elem_id="search-go")
            gr.Examples([[q] for q in EXAMPLE_QUERIES], inputs=[query])
            badge = gr.Markdown(elem_id="search-badge")
            results = gr.HTML(elem_id="search-results")
            plot = gr.Plot(label="Corpus map", elem_id="search-map")
            with gr.Accordion("Results (JSON)", open=False):
                results_json = gr.JSON(label="results")
            with gr.Accordion("Ask the corpus (retriever-reader)", open=False):
                question = gr.Textbox(label="Question", elem_id="search-question",
                                      placeholder="What does a causal mask do?")
                ask_btn = gr.Button("Ask", elem_id="search-ask")
                answer_md = gr.Markdown(elem_id="search-answer")
                reader_badge = gr.Markdown()
                answer_json = gr.JSON(label="answer")
            with gr.Accordion("Compare index types on this corpus", open=False):
                cmp_btn = gr.Button("Measure Flat / HNSW / IVF / IVF-PQ", elem_id="search-compare")
                cmp_plot = gr.Plot(label="trade-off")
                cmp_md = gr.Markdown()
                cmp_json = gr.JSON(label="configurations")

    file.change(inspect_upload, [file], [text_field, title_field], api_visibility="private")
    file.upload(lambda: "upload", None, [corpus], api_visibility="private")
    build_inputs = [corpus, file, paste, text_field, title_field, keep_good, max_words, overlap,
                    index_type, m, efc, efs, nlist, nprobe, pq_m, pq_bits]
    build_btn.click(build_index, build_inputs, [stats_md, stats_json, badge],
                    api_name="build_index", **MODEL_QUEUE)
    search_outputs = [results, plot, results_json, badge]
    search_btn.click(search, [query, k], search_outputs, api_name="search", **MODEL_QUEUE)
    query.submit(search, [query, k], search_outputs, api_visibility="private", **MODEL_QUEUE)
    ask_btn.click(ask, [question, k], [answer_md, answer_json, reader_badge],
                  api_name="ask_corpus", **MODEL_QUEUE)
    cmp_btn.click(compare, [k], [cmp_plot, cmp_md, cmp_json], api_name="compare_indexes",
                  **MODEL_QUEUE)
    root = gr.context.Context.root_block
    if root is not None:
        root.unload(drop_session)
