"""The Semantic search tab: build a FAISS index over a corpus, search it, map it, ask it.

Every index lives in the caller's Gradio session (`gr.Request.session_hash`: one per browser
page load, one per gradio_client Client), so one person's uploads never show up in another
person's results. Built-in corpora are shared and built once.
"""

from __future__ import annotations

import html

import gradio as gr

from backend.search.contracts import CONTRACTS
from backend import search
from components.shell import (
    BATCH_LANE, LONG_LANE, SHORT_LANE, Checkbox, Dropdown, File, Radio, Slider, Textbox, server_lane,
    server_or_long_slot, error_box, file_path, md_text, model_badge, raw_json,
)
from components.shell import code_view, gradio_patches, links, runs
from components.shell.endpoint import After, Endpoint, Link, Runs, declare
from components.search.answer import answer_markdown
from components.search.evaluate import build_evaluation
from components.search.plots import map_caption, map_figure, tradeoff_figure
from components.shell.plans import current
from components.shell.session import session_of

CORPUS_CHOICES = [("Glossary of the book's topics (built in)", "glossary"),
                  ("API docs: docstrings of installed libraries (built in)", "docstrings"),
                  ("Upload a file (.txt, .csv, .tsv, .jsonl)", "upload"),
                  ("Paste text", "paste")]
INDEX_CHOICES = ([("Auto (by corpus size)", search.AUTO)]
                 + [(label, kind) for kind, label in search.INDEX_LABELS.items()])
# German on the English glossary: with the multilingual index its passage (Hallucination) ranks first,
# with MiniLM's it is not in the top 10 (bench/results/cross_lingual_search.md).
GERMAN_EXAMPLE = "Wie nennt man es, wenn ein Modell flüssige Sätze schreibt, die schlicht nicht stimmen?"
EXAMPLE_QUERIES = ["how do I keep a model from repeating itself when generating?",
                   "make a model smaller and faster for production",
                   "split words into pieces", GERMAN_EXAMPLE]
EMBEDDER_CHOICES = [(label, key) for key, label in search.EMBEDDER_LABELS.items()]
# One line each, shown under the knob (info=): what it trades.
KNOB_INFO = {
    "m": "Links per node in the HNSW graph: more = higher recall, more memory, slower build.",
    "efc": "Candidates HNSW weighs while linking each new node: more = a better graph, slower build.",
    "efs": "Candidates HNSW explores per query: more = higher recall, slower query (no rebuild).",
    "nlist": "IVF: k-means clusters the vectors are split into; a query scans only a few of them.",
    "nprobe": "IVF: nearest clusters scanned per query; nprobe = nlist is exact (no rebuild).",
    "pq_m": "PQ: each vector is cut into m pieces stored as one code each (m bytes instead of 1,536).",
    "pq_bits": "PQ: bits per code, i.e. 2^bits centroids per piece: more = finer, slower training.",
}
MAP_SUMMARY = ("method", "explained_variance", "dims", "query", "neighbours", "total_points", "shown_points")


def _session(request: gr.Request | None) -> str:
    return session_of(request, "the search tab's index")


def estimate_check(plan: dict | None) -> str:
    """The embedding estimate said before a long build, checked against what it took: both numbers
    when they differ by more than 25% (a wrong estimate is said, not hidden)."""
    if not plan or plan.get("estimated_s") is None or not plan.get("seconds"):
        return ""
    est, took = float(plan["estimated_s"]), float(plan["seconds"])
    if abs(took - est) <= 0.25 * max(est, 1e-9):
        return f"Embedding took {took:.0f} s, as estimated before it started ({est:.0f} s)."
    return (f"Embedding took {took:.0f} s; the estimate before it started said {est:.0f} s "
            f"({abs(took - est) / est:.0%} {'longer' if took > est else 'shorter'}: the box was "
            f"{'busier' if took > est else 'quieter'} than when the rate was measured).")


def stats_markdown(st: dict, how: str = "") -> str:
    s = st["settings"]
    knobs = {"Flat (exact)": "", "SQ8 (8-bit scalar)": "",
             "HNSW": f"M={s['hnsw_m']}, efConstruction={s['ef_construction']}, efSearch={s['ef_search']}",
             "IVF-Flat": f"nlist={s['nlist']}, nprobe={s['nprobe']}",
             "IVF-PQ": f"nlist={s['nlist']}, nprobe={s['nprobe']}, m={s['pq_m']}, bits={s['pq_bits']}"}[st["index_type"]]
    built = f"loaded, {st['load_s']:.3f} s" if st["index_from_cache"] else f"{st['build_s']:.3f} s"
    lines = [
        f"### {st['index_type']} index over **{md_text(st['corpus'])}** {('(' + knobs + ')') if knobs else ''}{how}",
    ]
    if st.get("embedder") in search.EMBEDDER_LABELS:  # which model's vectors: queries are embedded by the same
        lines.append(f"**Embedder:** {md_text(search.EMBEDDER_LABELS[st['embedder']])} "
                     f"(`{md_text(st['model'].get('checkpoint', ''))}`)\n")
    if st.get("index_choice"):
        lines.append(f"**Index choice:** {md_text(st['index_choice']['reason'])}\n")
    lines += [
        # Two narrow tables, not one wide one: this column is ~500 px, and 8 headers wrapped mid-word.
        "| passages | dims | embed | build |",
        "|---|---|---|---|",
        f"| {st['count']:,} | {st['dims']} | "
        f"{'cached' if st['embeddings_from_cache'] else str(st['embed_s']) + ' s'} | "
        f"{built} |",
        "",
        "| memory MB | query ms | p95 ms | recall@{k} |".format(k=st["recall_k"]),
        "|---|---|---|---|",
        f"| {st['memory_mb']:.2f} | {st['query_ms_median']:.3f} | {st['query_ms_p95']:.3f} | {st['recall_at_k']:.3f} |",
        f"\n*Memory: the index; the raw vectors take {st['vectors_mb']:.2f} MB. Query time: the "
        f"index alone, one query on one thread (embedding the query excluded).*",
    ]
    notes = list(st.get("corpus_notes", [])) + list(st.get("notes", []))
    estimate = estimate_check(st.get("embedding"))
    if estimate:
        notes.append(estimate)
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
    choice = res.get("index_choice") or {}
    if choice.get("auto"):
        head += f"<div class='tlab-index-choice'><i>{html.escape(choice['reason'])}</i></div>"
    notes = "".join(f"<div><i>{html.escape(n)}</i></div>" for n in res["notes"])
    return f"<div id='tlab-search-results'>{head}{notes}{''.join(rows)}</div>"


# ------------------------------------------------------------------------- handlers
def build_index(choice="glossary", file=None, paste="", text_field="", title_field="", keep_good=False,
                max_words=search.DEFAULT_CHUNK_WORDS, overlap=search.DEFAULT_OVERLAP_WORDS,
                index_type=search.AUTO, m=32, efc=40, efs=16, nlist=100, nprobe=8, pq_m=16, pq_bits=8,
                embedder="minilm", request: gr.Request = None, progress=gr.Progress()):
    sid = _session(request)
    settings = search.index_settings(index_type, m, efc, efs, nlist, nprobe, pq_m, pq_bits)
    stats = search.build_index(sid, choice, file_path(file), paste, text_field, title_field,
                               keep_good, max_words, overlap, settings, progress=progress, embedder=embedder)
    return stats_markdown(stats), stats, model_badge(stats["model"])


AUTO_HOW = " (built for you: change the corpus or index and press Build to replace it)"


def open_tab(request: gr.Request = None):
    """The tab opened: a session with no index gets the glossary (so Search works at once)."""
    stats = search.ensure_index(_session(request))
    if stats is None:
        return gr.update(), gr.update(), gr.update()
    return stats_markdown(stats, AUTO_HOW), stats, model_badge(stats["model"])


def run_search(query, k=5, request: gr.Request = None):
    sid = _session(request)
    res = search.search(sid, query, k)
    m = res["map"]
    out = {**res, "map": {key: m[key] for key in MAP_SUMMARY}}
    return results_html(res), map_figure(m), out, model_badge(res["model"])


def after_search(res):
    """The map's caption, and the stats of an index the search had to build (a private
    follow-up, so /search keeps its four outputs)."""
    if not isinstance(res, dict) or "map" not in res:
        return gr.update(), gr.update()
    stats = gr.update()
    if res.get("auto_built"):
        a = res["auto_built"]
        stats = (f"### {md_text(a['index_type'])} index over **{md_text(a['corpus'])}**{AUTO_HOW}\n\n"
                 f"**Index choice:** {md_text(a['index_choice']['reason'])}")
    return map_caption(res["map"]), stats


def ask(question, k=5, request: gr.Request = None, progress=gr.Progress()):
    with server_or_long_slot(not current(_reader_plan, ()).long, "reader"):
        out = search.ask(_session(request), question, k, progress=progress)
    md = answer_markdown(out)
    return md, out, model_badge(out["model"])


def _reader_plan(args: tuple):
    """With a generation server the reader's answer is the server's work: Ask joins the decode lane
    (`server_lane`), and takes the long lane's slot only when it reads here (the backend's plan)."""
    return search.reader_plan()


def compare(k=5, request: gr.Request = None, progress=gr.Progress()):
    rows = search.compare_indexes(_session(request), k, progress=progress)
    recall_k = rows[0]["recall_k"] if rows and "recall_k" in rows[0] else k
    table = "| index | build s | memory MB | latency ms (median) | recall@{k} |\n|---|---|---|---|---|\n".format(k=recall_k)
    table += "\n".join(f"| {r['label']} | {r['build_s']:.3f} | {r['memory_mb']:.2f} | "
                       f"{r['query_ms_median']:.3f} | {r['recall_at_k']:.3f} |" for r in rows)
    return tradeoff_figure(rows), table, rows


SOURCE_NAMES = {"glossary": "the glossary", "docstrings": "the API docs", "upload": "your upload",
                "paste": "your pasted text"}


def _source_name(source: str, held: dict | None = None) -> str:
    if not isinstance(source, str):  # a stranger's value for the corpus (a dict, a list): named, never a crash
        source = str(source)
    if held is not None and source in ("upload", "paste"):
        return md_text(held["corpus"])
    return SOURCE_NAMES.get(source, md_text(source))


def corpus_after_failure(choice, request: gr.Request = None):
    """After a refused or failed build: the corpus selector shows what the session's index holds
    (the old index stays), with one line saying why it switched back."""
    sid = getattr(request, "session_hash", None) if request is not None else None
    held = search.held_index(sid) if sid else None
    source = held["source"] if held else search.AUTO_CORPUS
    if source == choice:
        return gr.update(), gr.update(value="", visible=False)
    if held is None:
        still = f"there is no index yet, so your first search builds {_source_name(source)} first"
    else:
        still = (f"searches still run on {_source_name(source, held)} ({held['count']:,} passages, "
                 f"{md_text(held['index_type'])} index)")
    line = (f"↩ Switched back to **{_source_name(source, held)}**: {_source_name(choice)} could not be indexed "
            f"(the error message says why); {still}.")
    return gr.update(value=source), gr.update(value=line, visible=True)


def source_controls(choice):
    """Show the upload / paste controls (and passage sizing) only for that corpus source."""
    private = choice in ("upload", "paste")
    return (gr.update(visible=choice == "upload"), gr.update(visible=choice == "paste"),
            gr.update(visible=private))


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
def _index_column():
    """The corpus, its upload or paste, passage length and the index knobs; the Build button."""
    with gr.Column(scale=1):
        corpus = Radio(CORPUS_CHOICES, value="glossary", label="Corpus",
                       elem_id="search-corpus")
        corpus_note = gr.Markdown("", visible=False, elem_id="search-corpus-note")
        embedder = Radio(EMBEDDER_CHOICES, value="minilm", label="Embedder", elem_id="search-embedder",
                         info="Multilingual: cross-lingual retrieval, a German, French or Italian question "
                              "finds the English passage. Press Build after changing it.")
        index_type = Dropdown(INDEX_CHOICES, value=search.AUTO, label="Index type",
                              elem_id="search-index-type",
                              info="Auto picks exact search while it costs under ~1 ms, HNSW above.")
        build_btn = gr.Button("Build index", variant="primary", elem_id="search-build")
        with gr.Group(visible=False, elem_id="search-upload-group") as upload_group:
            file = File(label="Upload", file_types=[".txt", ".csv", ".tsv", ".jsonl"],
                        type="filepath", value=None, elem_id="search-file")
            text_field = Dropdown([], value="", label="Text column / field", allow_custom_value=True,
                                  info="CSV/TSV column or JSONL field")
            title_field = Dropdown([], value="", label="Title column / field (optional)",
                                   allow_custom_value=True)
            keep_good = Checkbox(False, label="JSONL: keep the good lines if some are broken")
        with gr.Group(visible=False, elem_id="search-paste-group") as paste_group:
            paste = Textbox(label="Paste documents (one per line, or separated by blank lines)",
                            lines=4, value="", elem_id="search-paste")
        with gr.Accordion("Passages", open=False, visible=False) as passages_box:
            max_words = Slider(20, 400, value=search.DEFAULT_CHUNK_WORDS, step=10,
                               label="Passage length (words)")
            overlap = Slider(0, 100, value=search.DEFAULT_OVERLAP_WORDS, step=5,
                             label="Overlap between passages (words)")
        with gr.Accordion("Index knobs", open=False):
            m = Slider(4, 64, value=32, step=4, label="HNSW M", info=KNOB_INFO["m"])
            efc = Slider(8, 400, value=40, step=8, label="HNSW efConstruction", info=KNOB_INFO["efc"])
            efs = Slider(1, 512, value=16, step=1, label="HNSW efSearch", info=KNOB_INFO["efs"])
            nlist = Slider(1, 4096, value=100, step=1, label="IVF nlist", info=KNOB_INFO["nlist"])
            nprobe = Slider(1, 256, value=8, step=1, label="IVF nprobe", info=KNOB_INFO["nprobe"])
            pq_m = Slider(1, 96, value=16, step=1, label="PQ m (divides 384)", info=KNOB_INFO["pq_m"])
            pq_bits = Slider(4, 12, value=8, step=1, label="PQ bits", info=KNOB_INFO["pq_bits"])
    return (corpus, corpus_note, index_type, build_btn, upload_group, file, text_field, title_field, keep_good,
            paste_group, paste, passages_box, max_words, overlap, m, efc, efs, nlist, nprobe, pq_m, pq_bits,
            embedder)


def _ask_and_compare():
    """Ask the corpus (the retriever-reader) and the index comparison, each in its own accordion."""
    with gr.Accordion("Ask the corpus (retriever-reader)", open=False):
        question = Textbox(label="Question", elem_id="search-question",
                           value="What does a causal mask do?")
        ask_btn = gr.Button("Ask", elem_id="search-ask")
        ask_box = error_box(elem_id="search-ask-error")
        answer_md = gr.Markdown(elem_id="search-answer")
        reader_badge = gr.Markdown(elem_id="search-reader-badge")
        answer_json = raw_json("Answer (JSON: what /ask_corpus returns)", elem_id="search-answer-json")
    with gr.Accordion("Compare index types on this corpus", open=False):
        cmp_btn = gr.Button("Measure Flat / SQ8 / HNSW / IVF / IVF-PQ", elem_id="search-compare")
        cmp_box = error_box(elem_id="search-compare-error")
        cmp_plot = gr.Plot(label="trade-off", elem_id="search-compare-plot")
        cmp_md = gr.Markdown(elem_id="search-compare-table")
        cmp_json = raw_json("Configurations (JSON: what /compare_indexes returns)",
                            elem_id="search-compare-json")
    build_evaluation()
    return (question, ask_btn, ask_box, answer_md, reader_badge, answer_json,
            cmp_btn, cmp_box, cmp_plot, cmp_md, cmp_json)


def build() -> None:
    tab = gradio_patches.enclosing_block()  # the gr.Tab app.py opened around this call (if any)
    gr.Markdown(
        "## Semantic search with FAISS\n"
        "Embed a corpus with the **embedder** (mean pooling + L2 normalisation, so inner "
        "product = cosine), index it with FAISS, and search it by meaning. The glossary is ready "
        "when the tab opens: just press **Search**. Compare index types: build time, memory, "
        "latency and recall against exact search. Your uploads stay in your session only.")
    with gr.Row():
        (corpus, corpus_note, index_type, build_btn, upload_group, file, text_field, title_field, keep_good,
         paste_group, paste, passages_box, max_words, overlap, m, efc, efs, nlist, nprobe, pq_m, pq_bits,
         embedder) = _index_column()
        with gr.Column(scale=2):
            with gr.Row():
                query = Textbox(label="Query", scale=4, elem_id="search-query", value=EXAMPLE_QUERIES[0])
                k = Slider(1, 50, value=5, step=1, label="k", scale=1)
            search_btn = gr.Button("Search", variant="primary", elem_id="search-go")
            link_bar = links.bar("search")  # the search's link (?tab=search&query=...): not run on open
            gr.Examples([[q] for q in EXAMPLE_QUERIES], inputs=[query])
            box = error_box(elem_id="search-error")
            stats_md = gr.Markdown(elem_id="search-stats")
            stats_json = raw_json("Index stats (JSON: what /build_index returns)", elem_id="search-stats-json")
            build_code = code_view.view("search-index", of="the index")  # "The same in Python" of the build, under its stats
            badge = gr.Markdown(elem_id="search-badge")
            results = gr.HTML(elem_id="search-results")
            plot = gr.Plot(label="Corpus map", elem_id="search-map")
            caption = gr.Markdown(elem_id="search-map-caption")
            results_json = raw_json("Results (JSON: what /search returns)", elem_id="search-json")
            search_code = code_view.view("search", of="the search")  # "The same in Python" of the search, under its results
            kept = runs.panel("search")  # this session's searches, two side by side
            (question, ask_btn, ask_box, answer_md, reader_badge, answer_json,
             cmp_btn, cmp_box, cmp_plot, cmp_md, cmp_json) = _ask_and_compare()
    corpus.change(source_controls, [corpus], [upload_group, paste_group, passages_box],
                  api_visibility="private", queue=False)
    file.change(inspect_upload, [file], [text_field, title_field], api_visibility="private")
    file.upload(lambda: "upload", None, [corpus], api_visibility="private")
    build_inputs = {"choice": corpus, "file": file, "paste": paste, "text_field": text_field,
                    "title_field": title_field, "keep_good": keep_good, "max_words": max_words, "overlap": overlap,
                    "index_type": index_type, "m": m, "efc": efc, "efs": efs, "nlist": nlist, "nprobe": nprobe,
                    "pq_m": pq_m, "pq_bits": pq_bits, "embedder": embedder}
    # A refused or failed build leaves the old index: the selector goes back to what it holds. A new
    # index makes the hits, map, caption and code of the old one stale: they go.
    declare(Endpoint("build_index", build_index, build_inputs, [stats_md, stats_json, badge], trigger=build_btn,
                     lane=LONG_LANE, errors=box, result=stats_json, code=build_code, after=[
                         After("failure", corpus_after_failure, [corpus], [corpus, corpus_note]),
                         After("success", lambda: [gr.update(value="", visible=False), "", None, "", None, "", "",
                                                   None], None,
                               [corpus_note, results, plot, caption, results_json, *search_code.outputs])], contract=CONTRACTS["build_index"]))
    corpus.input(lambda: gr.update(value="", visible=False), None, [corpus_note], queue=False,
                 api_visibility="private")
    # The map's caption follows. A link restores the query and k (an index is built on the tab's open, so a
    # link never presses Search) and blanks the last search's results.
    declare(Endpoint("search", run_search, {"query": query, "k": k}, [results, plot, results_json, badge],
                     trigger=search_btn, also=[query.submit], lane=BATCH_LANE, errors=box,
                     cleared=[results, plot, results_json, badge, caption], result=results_json, code=search_code,
                     after=[After("success", after_search, [results_json], [caption, stats_md])],
                     link=Link("search", link_bar, results=[results, plot, results_json, badge, caption]),
                     runs=Runs(kept, [badge, results, plot]), contract=CONTRACTS["search"]))
    declare(Endpoint("ask_corpus", ask, {"question": question, "k": k}, [answer_md, answer_json, reader_badge],
                     trigger=ask_btn, lane=server_lane(), errors=ask_box, planner=_reader_plan, contract=CONTRACTS["ask_corpus"]))
    declare(Endpoint("compare_indexes", compare, {"k": k}, [cmp_plot, cmp_md, cmp_json], trigger=cmp_btn,
                     lane=LONG_LANE, errors=cmp_box, contract=CONTRACTS["compare_indexes"]))
    if isinstance(tab, gr.Tab):  # opening the tab readies the glossary (shared: built once)
        declare(Endpoint(None, open_tab, {}, [stats_md, stats_json, badge], trigger=tab.select, lane=SHORT_LANE))
    search.prepare_cache()  # start-up: leftovers of crashed cache writes removed
    root = gradio_patches.page_being_built()
    if root is not None:
        root.unload(drop_session)
