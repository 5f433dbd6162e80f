"""The Semantic search tab: build a FAISS index over a corpus, search it, map it, ask it.

Every index lives in the caller's Gradio session (`gr.Request.session_hash`: one per browser
page load, one per gradio_client Client), so one person's uploads never show up in another
person's results. Built-in corpora are shared and built once.
"""

from __future__ import annotations

import html

import gradio as gr

from backend import search
from components.common import (
    LONG_LANE, MODEL_QUEUE, Checkbox, Dropdown, File, Radio, Slider, Textbox, file_path, md_text, model_badge,
    user_errors,
)
from components.search_plots import map_figure, tradeoff_figure

CORPUS_CHOICES = [("Glossary of the book's topics (built in)", "glossary"),
                  ("API docs: docstrings of installed libraries (built in)", "docstrings"),
                  ("Upload a file (.txt, .csv, .tsv, .jsonl)", "upload"),
                  ("Paste text", "paste")]
INDEX_CHOICES = [(label, kind) for kind, label in search.INDEX_LABELS.items()]
EXAMPLE_QUERIES = ["how do I keep a model from repeating itself when generating?",
                   "make a model smaller and faster for production",
                   "split words into pieces"]
MAP_SUMMARY = ("method", "query", "neighbours", "total_points", "shown_points")


def _session(request: gr.Request | None) -> str:
    sid = getattr(request, "session_hash", None) if request is not None else None
    if not sid:
        raise gr.Error("No session: the search tab keeps your index per browser session; "
                       "reload the page.")
    return sid


def stats_markdown(st: dict) -> str:
    s = st["settings"]
    knobs = {"Flat (exact)": "", "HNSW": f"M={s['hnsw_m']}, efConstruction={s['ef_construction']}, efSearch={s['ef_search']}",
             "IVF-Flat": f"nlist={s['nlist']}, nprobe={s['nprobe']}",
             "IVF-PQ": f"nlist={s['nlist']}, nprobe={s['nprobe']}, m={s['pq_m']}, bits={s['pq_bits']}"}[st["index_type"]]
    lines = [
        f"### {st['index_type']} index over **{md_text(st['corpus'])}** {('(' + knobs + ')') if knobs else ''}",
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
    lines += [f"\n> {md_text(n)}" for n in notes]
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


# ------------------------------------------------------------------------- handlers
@user_errors
def build_index(choice="glossary", file=None, paste="", text_field="", title_field="", keep_good=False,
                max_words=search.DEFAULT_CHUNK_WORDS, overlap=search.DEFAULT_OVERLAP_WORDS,
                index_type="flat", m=32, efc=40, efs=16, nlist=100, nprobe=8, pq_m=16, pq_bits=8,
                request: gr.Request = None, progress=gr.Progress()):
    sid = _session(request)
    settings = search.index_settings(index_type, m, efc, efs, nlist, nprobe, pq_m, pq_bits)
    stats = search.build_index(sid, choice, file_path(file), paste, text_field, title_field,
                               keep_good, max_words, overlap, settings, progress=progress)
    return stats_markdown(stats), stats, model_badge(stats["model"])


@user_errors
def run_search(query, k=5, request: gr.Request = None):
    res = search.search(_session(request), query, k)
    m = res["map"]
    out = {**res, "map": {key: m[key] for key in MAP_SUMMARY}}
    return results_html(res), map_figure(m), out, model_badge(res["model"])


@user_errors
def ask(question, k=5, request: gr.Request = None, progress=gr.Progress()):
    out = search.ask(_session(request), question, k, progress=progress)
    passages = out["passages"]
    how = ("an extractive QA model picked the answer span" if out["reader_method"] == "model"
           else "the instruct decoder was prompted with the passages (no extractive QA model "
                "offline); check its citations")
    cited = ", ".join(f"\\[{c}\\] {md_text(passages[c - 1]['title'])}" for c in out["cited"])
    src = "" if out.get("citations_from", "reader") == "reader" else f" (by {md_text(out['citations_from'])})"
    md = (f"**Answer:** {md_text(out['answer']) or '(no answer)'}\n\n"
          f"**Cited passages{src}:** {cited or 'none'}\n\n*Reader: {how}.*")
    return md, out, model_badge(out["model"])


@user_errors
def compare(k=5, request: gr.Request = None, progress=gr.Progress()):
    rows = search.compare_indexes(_session(request), k, progress=progress)
    recall_k = rows[0]["recall_k"] if rows and "recall_k" in rows[0] else k
    table = "| index | build s | memory MB | latency ms (median) | recall@{k} |\n|---|---|---|---|---|\n".format(k=recall_k)
    table += "\n".join(f"| {r['label']} | {r['build_s']:.3f} | {r['memory_mb']:.2f} | "
                       f"{r['query_ms_median']:.3f} | {r['recall_at_k']:.3f} |" for r in rows)
    return tradeoff_figure(rows), table, rows


def inspect_upload(file):
    """Fill the field dropdowns from an uploaded table / JSONL (no model, no API)."""
    info = search.inspect_upload(file_path(file))
    if info is None:
        return gr.update(), gr.update()
    if not info["table"]:
        return gr.update(choices=[], value=None), gr.update(choices=[], value=None)
    cols = info["columns"]
    return (gr.update(choices=cols, value=info["text"]),
            gr.update(choices=[""] + cols, value=info["title"] or ""))


def drop_session(request: gr.Request):
    """Closing the page frees that session's private index (idle eviction covers the rest)."""
    sid = getattr(request, "session_hash", None) if request is not None else None
    search.drop_session(sid)


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
            corpus = Radio(CORPUS_CHOICES, value="glossary", label="Corpus",
                              elem_id="search-corpus")
            file = File(label="Upload", file_types=[".txt", ".csv", ".tsv", ".jsonl"],
                           type="filepath", value=None, elem_id="search-file")
            paste = Textbox(label="Or paste documents (one per line, or separated by blank "
                               "lines)", lines=4, value="", elem_id="search-paste")
            with gr.Row():
                text_field = Dropdown([], value="", label="Text column / field", allow_custom_value=True,
                                         info="CSV/TSV column or JSONL field")
                title_field = Dropdown([], value="", label="Title column / field (optional)",
                                          allow_custom_value=True)
            keep_good = Checkbox(False, label="JSONL: keep the good lines if some are broken")
            with gr.Accordion("Passages", open=False):
                max_words = Slider(20, 400, value=search.DEFAULT_CHUNK_WORDS, step=10,
                                      label="Passage length (words)")
                overlap = Slider(0, 100, value=search.DEFAULT_OVERLAP_WORDS, step=5,
                                    label="Overlap between passages (words)")
            index_type = Dropdown(INDEX_CHOICES, value="flat", label="Index type",
                                     elem_id="search-index-type")
            with gr.Accordion("Index knobs", open=False):
                m = Slider(4, 64, value=32, step=4, label="HNSW M (neighbours per node)")
                efc = Slider(8, 400, value=40, step=8, label="HNSW efConstruction")
                efs = Slider(1, 512, value=16, step=1, label="HNSW efSearch (query time)")
                nlist = Slider(1, 4096, value=100, step=1, label="IVF nlist (lists)")
                nprobe = Slider(1, 256, value=8, step=1, label="IVF nprobe (query time)")
                pq_m = Slider(1, 96, value=16, step=1, label="PQ sub-quantizers m (divides 384)")
                pq_bits = Slider(4, 12, value=8, step=1, label="PQ bits per code")
            build_btn = gr.Button("Build index", variant="primary", elem_id="search-build")
        with gr.Column(scale=2):
            stats_md = gr.Markdown(elem_id="search-stats")
            with gr.Accordion("Index stats (JSON)", open=False):
                stats_json = gr.JSON(label="stats")
            with gr.Row():
                query = Textbox(label="Query", scale=4, elem_id="search-query",
                                   placeholder=EXAMPLE_QUERIES[0])
                k = Slider(1, 50, value=5, step=1, label="k", scale=1)
            search_btn = gr.Button("Search", variant="primary", elem_id="search-go")
            gr.Examples([[q] for q in EXAMPLE_QUERIES], inputs=[query])
            badge = gr.Markdown(elem_id="search-badge")
            results = gr.HTML(elem_id="search-results")
            plot = gr.Plot(label="Corpus map", elem_id="search-map")
            with gr.Accordion("Results (JSON)", open=False):
                results_json = gr.JSON(label="results")
            with gr.Accordion("Ask the corpus (retriever-reader)", open=False):
                question = Textbox(label="Question", elem_id="search-question",
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
                    api_name="build_index", **LONG_LANE)
    search_outputs = [results, plot, results_json, badge]
    search_btn.click(run_search, [query, k], search_outputs, api_name="search", **MODEL_QUEUE)
    query.submit(run_search, [query, k], search_outputs, api_visibility="private", **MODEL_QUEUE)
    ask_btn.click(ask, [question, k], [answer_md, answer_json, reader_badge],
                  api_name="ask_corpus", **LONG_LANE)
    cmp_btn.click(compare, [k], [cmp_plot, cmp_md, cmp_json], api_name="compare_indexes",
                  **LONG_LANE)
    search.prepare_cache()  # start-up: leftovers of crashed cache writes removed
    root = gr.context.Context.root_block
    if root is not None:
        root.unload(drop_session)
