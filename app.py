"""Transformers Lab: the book "Natural Language Processing with Transformers", to run and poke.

Builds the Gradio Blocks UI from components/ and launches it. Flags mirror environment
variables (TLAB_PROFILE, ...) so backend code reads one source of settings.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no phone-home: works offline
# Gradio's queue rebuilds a pandas summary of its last 10,000 events after every event, for the
# monitoring dashboard (off here): most of the server's CPU per event once a few hundred have run.
QUEUE_SUMMARY_EVERY = 10**12  # events: never, in practice
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(QUEUE_SUMMARY_EVERY))

from backend.runtime import env  # noqa: E402  (after the two settings above: it imports nothing of Gradio)
from backend.runtime.config import DEFAULT_HOST, DEFAULT_PORT  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", DEFAULT_HOST))
    p.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", DEFAULT_PORT)))
    p.add_argument("--share", action="store_true", help="ask Gradio for a public link (needs network)")
    p.add_argument("--profile", choices=("auto", "book", "local"), default=env.read("TLAB_PROFILE"))
    p.add_argument("--preload", action="store_true", help="load the encoder, decoder and embedder at start-up")
    p.add_argument("--generation-url", default=env.read("TLAB_GENERATION_URL"),
                   help="an OpenAI-compatible server (vLLM) that generates for the decoder roles, e.g. "
                        "http://127.0.0.1:8400 (TLAB_GENERATION_URL; `make server-run` starts one)")
    return p.parse_args(argv)


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def status_rows() -> list[list]:
    from backend.hub import get_hub

    return [
        [r["role"], r.get("checkpoint") or "-", r.get("source") or "-", r.get("method") or "-",
         "yes" if r.get("loaded") else "no", r.get("error") or r.get("reason") or ""]
        for r in get_hub().status()
    ]


def status_header() -> str:
    from backend.runtime.config import get_settings
    from backend.runtime.device import on_zerogpu, pick_device

    s = get_settings()
    from backend.runtime.config import public_mode

    gpu = " (ZeroGPU)" if on_zerogpu() else ""
    if public_mode():  # no server paths for strangers
        return f"**Device:** {pick_device()}{gpu} · **Profile:** `{s.profile}` · public mode"
    return f"**Device:** {pick_device()}{gpu} · **Profile:** `{s.profile}` · **Cache:** `{s.cache_dir}`"


# Page-wide CSS (Gradio 6 takes css only in launch(); a <style> in the head works from here).
# On a phone a wide result table keeps readable columns and scrolls inside itself, never the page.
STYLE = """
.tab-chapter { font-size: 0.92em; opacity: 0.9; }
#main-tabs .prose h1, #main-tabs .prose h2, #main-tabs .prose h3 { font-size: var(--text-xl); font-weight: 600; }
/* Start's step buttons took their grey card's own colour and no border: Reveal and Open read as plain text */
.start-step button { border: 1px solid var(--color-accent, #f97316) !important; border-radius: 6px !important;
  background: var(--background-fill-primary, #fff) !important; color: var(--body-text-color) !important;
  font-weight: 600; }
.start-step button:hover { background: var(--color-accent-soft, #ffedd5) !important; }
@media (max-width: 760px) {
  #decoding-steps .table-container, #decoding-outputs .table-container, #decoding-compare-table .table-container
    { overflow-x: auto; }
  #decoding-steps .table-wrap { min-width: 1040px; }
  #decoding-outputs .table-wrap, #decoding-compare-table .table-wrap { min-width: 640px; }
  /* Start: a chapter's text takes the whole width, its Try button goes under it (not a 140 px column) */
  .start-chapter { flex-wrap: wrap; }
  .start-chapter > * { flex: 1 1 100% !important; min-width: 100% !important; }
}
"""


def build_app(tabs=None):
    """The page: every tab (and Start), or only the tab keys in `tabs` ("start" for the Start page)
    inside the same shell, so a one-tab page (the browser tests' own) is the real page with fewer tabs."""
    import gradio as gr

    # Gradio's file cache (uploads, downloads, plots as files) is swept every 10 minutes of what is
    # older than an hour, and emptied when the server restarts: no visitor's files outlive that.
    with gr.Blocks(title="Transformers Lab", delete_cache=(600, 3600)) as demo:
        gr.HTML("", head=f"<style>{STYLE}</style>", elem_id="tlab-style", visible="hidden")
        from components.shell import figure_tools

        figure_tools()  # PNG / SVG buttons and the "What to notice" line under every plot
        from components.shell import guide

        guide.guide_tools()  # every glossary term defined on hover / tap; the learner's own wait
        from components.shell import links

        links.address_tools()  # the one writer of the address bar (links, tab changes)
        from components.shell import challenges

        challenges.tools()  # the challenge sections' script; /challenges and /check_challenge
        gr.Markdown("# Transformers Lab\n" + tagline())
        _status_panel(gr)
        _tabs(gr, demo, None if tabs is None else set(tabs))
    from components.shell.guard import guard

    guard(demo)  # every handler, private ones included, answers a stranger's values readably
    return demo


def _status() -> tuple[str, list[list]]:
    return status_header(), status_rows()


def _status_panel(gr) -> None:
    """Which model serves each role. While the panel is open it follows the hub every few
    seconds (a model that a tab just loaded shows as loaded); closed, it costs nothing."""
    with gr.Accordion("Models and device", open=False, elem_id="status-panel") as panel:
        header = gr.Markdown(status_header())
        table = gr.Dataframe(
            headers=["role", "checkpoint", "source", "method", "loaded", "why"],
            value=status_rows(),
            interactive=False,
            wrap=True,
            elem_id="status-table",
        )
        refresh = gr.Button("Refresh", size="sm")
    refresh.click(_status, None, [header, table], api_name="status")
    from backend.runtime.contract import SMALL, Contract
    from components.shell import door

    door.attach(_status, Contract({}, SMALL), [])  # no arguments; a look at the models panel
    ticker = gr.Timer(3.0, active=False)
    from components.shell.lifecycle import PAGE_ONLY

    ticker.tick(_status, None, [header, table], **PAGE_ONLY)
    panel.expand(lambda: (*_status(), gr.Timer(active=True)), None,
                 [header, table, ticker], api_visibility="private", queue=False)
    panel.collapse(lambda: gr.Timer(active=False), None, ticker, api_visibility="private", queue=False)


# (tab title, element id, tab id (its name in a link's ?tab=), what the tagline says it lets a learner see)
TABS = (
    ("Pipelines", "pipelines-tab", "pipelines", "the pipeline() tasks"),
    ("Train", "train-tab", "train", "training a classifier three ways and a token classifier"),
    ("Tokenizers", "tokenizers-tab", "tokenizers", "tokenizers"),
    ("Multilingual", "multilingual-tab", "multilingual", "named entities across languages"),
    ("Anatomy", "anatomy-tab", "anatomy", "a transformer block recomputed by hand"),
    ("Attention", "attention-tab", "attention", "attention"),
    ("Why", "why-tab", "why", "which words a prediction rests on"),
    ("Decoding", "decoding-tab", "decoding", "decoding strategies"),
    ("Efficiency", "efficiency-tab", "efficiency", "int8 against fp32"),
    ("Interventions", "interventions-tab", "interventions", "ablating heads and layers"),
    ("Semantic search", "search-tab", "search", "semantic search"),
    ("From scratch", "scratch-tab", "scratch", "training a tokenizer, a tiny GPT and a tiny encoder-decoder from scratch"),
)


def tagline() -> str:
    """What the app teaches, one phrase per tab, so the line names every tab there is."""
    said = [what for *_, what in TABS]
    return ("Run, poke and *see* what *Natural Language Processing with Transformers* teaches: "
            + ", ".join(said[:-1]) + " and " + said[-1] + ", on real models.")


def _tabs(gr, demo, only: set | None = None) -> None:
    """The Start page, then the tabs (those in `only`, when given), each under its chapter line; their row
    wraps on a phone instead of hiding tabs behind a "..." menu. Links and Start buttons are wired last,
    once every tab has registered its inputs."""
    from components.anatomy import ui as anatomy
    from components.attention import ui as attention
    from components.shell import challenges, course
    from components.decoding import ui as decoding
    from components.efficiency import ui as efficiency
    from components.shell import links
    from components.pipelines import ui as pipelines
    from components.search import ui as search
    from components.start import ui as start
    from components.interventions import ui as interventions
    from components.multilingual import ui as multilingual
    from components.scratch import ui as scratch
    from components.tokenizers import ui as tokenizer
    from components.train import ui as train
    from components.why import ui as why

    builders = {"Pipelines": pipelines, "Train": train, "Tokenizers": tokenizer, "Anatomy": anatomy,
                "Attention": attention, "Decoding": decoding, "Efficiency": efficiency, "Semantic search": search,
                "Interventions": interventions, "From scratch": scratch, "Why": why, "Multilingual": multilingual}

    def wanted(key: str) -> bool:
        return only is None or key in only

    built = [row for row in TABS if wanted(row[2])]
    links.reset()
    links.known_tabs((["start"] if wanted("start") else []) + [key for _, _, key, _ in built])
    tries = []  # Start's buttons (none on a page without Start)
    with gr.Tabs(overflow_behavior="wrap", elem_id="main-tabs") as tabs:
        if wanted("start"):
            with gr.Tab("Start", id="start", elem_id="start-tab") as tab:
                tries = start.build({key: title for title, _, key, _ in TABS})
            links.follow_tab(tab, "start", "start-tab")
        for title, elem_id, key, _ in built:
            with gr.Tab(title, id=key, elem_id=elem_id) as tab:
                header = course.header_markdown(key)
                if header:
                    gr.Markdown(header, elem_id=f"{key}-chapter", elem_classes=["tab-chapter"])
                challenges.section(key, challenges.for_tab(key), f"Challenges for {title}")
                builders[title].build()
            links.follow_tab(tab, key, elem_id)  # the address bar names the tab on screen
    _links(demo, tabs, tries)


def _links(demo, tabs, tries) -> None:
    """What crosses tabs, once every tab has declared its own link: the Start page's tries, the hand-offs,
    kept runs and the life cycle; then a page opened with a query string restores its tab
    (components/shell/links.py, page_query.py)."""
    from components.shell import lifecycle, links, page_query, runs
    from components.start import ui as start

    start.wire(tries, tabs)
    links.wire_handoffs(tabs)
    runs.wire()  # a kept run's link ("Your runs") reopens it in place
    lifecycle.wire()  # every run's after-success and after-failure jobs, one handler per outcome
    # A page opened with a query string restores its tab, then says it has applied its own address: the
    # address follower writes nothing before (Gradio's first render selects Start, and "?tab=start" then
    # reached the restore instead of the link), and the browser tests wait for it before they click a tab.
    page_query.wire(demo, tabs)


_PROCESS_PATCHED: list[bool] = []  # the process-wide serving patches, applied once per process


def served_app(tabs=None):
    """The page as a visitor gets it (`build_app(tabs)` queued, each visitor admitted fairly), after
    the process-wide serving patches: what main() launches and what the browser tests' tab pages serve."""
    from components.shell import session_memory

    if not _PROCESS_PATCHED:
        session_memory.bound()  # no per-visitor copies of every value (Gradio keeps them for deep links)
        session_memory.limit_uploads()  # a few files per upload request, not Gradio's 1,000
        session_memory.patient_start()  # launch's look at its own page waits out a loaded box
        session_memory.keep_uploads_bounded()  # the upload folder capped between Gradio's hourly cleanings
        _PROCESS_PATCHED.append(True)
    demo = build_app(tabs)
    from backend.runtime.config import get_settings
    from components.shell import admit_fairly

    demo.queue(default_concurrency_limit=4, max_size=get_settings().queue_max)  # more waiting: refused at once
    admit_fairly(demo)  # one long job per visitor, a bounded long-lane wait (components/shell/lanes.py)
    return demo


def launch_options(host: str, port: int, share: bool = False) -> dict:
    """demo.launch's keyword arguments for a page served on host:port (main() and the tests' tab pages)."""
    from starlette.middleware import Middleware
    from starlette.middleware.gzip import GZipMiddleware

    from components.shell import body_gate, live_settings, session_memory, upload_gate

    return dict(
        server_name=host,
        server_port=port,
        share=share,
        theme=theme(),
        max_file_size=f"{upload_gate.FILE_MAX_MB}mb",  # per file, while its bytes arrive
        # per request, per client, the folder's cap; an operator's live settings where a token was given
        # a body's size before it is parsed; a malformed one answered in words (not pydantic's 422)
        # the page's config (1.5 MB) and JSON replies travel gzipped; event streams and zips are left alone
        app_kwargs={"middleware": [Middleware(GZipMiddleware, minimum_size=1024)] + body_gate.middleware()
                    + upload_gate.middleware() + live_settings.middleware(),
                    "exception_handlers": body_gate.exception_handlers()},
        state_session_capacity=session_memory.STATE_SESSIONS,
        show_error=True,
        footer_links=["api", "settings"],
    )


def theme():
    import gradio as gr

    # System fonts only: the default theme would fetch web fonts, which fails offline.
    system = ["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "sans-serif"]
    mono = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"]
    return gr.themes.Default(font=system, font_mono=mono)


def _trained_here(hub) -> tuple[str, ...]:
    """Roles the profile serves with a model trained here (offline sentiment, NER)."""
    from backend.runtime.config import METHOD_FINETUNED, ROLES

    roles = []
    for role in ROLES:
        try:
            if hub.resolve(role).method == METHOD_FINETUNED:
                roles.append(role)
        except Exception:  # no model for the role: its tab says so
            continue
    return tuple(roles)


def _say_server(url: str) -> None:
    """One start-up line: is the generation server there? (It may come up later: each request checks.)"""
    from backend.engines.server import generation as remote_generation

    try:
        eng = remote_generation.server(url)
        print(f"generation server: {eng.kind} at {eng.url} serving {eng.model}", file=sys.stderr)
    except remote_generation.ServerUnavailable:
        print(f"generation server at {url} is not answering yet: generation runs in-process until it does",
              file=sys.stderr)


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ["TLAB_PROFILE"] = args.profile
    if args.generation_url:
        os.environ["TLAB_GENERATION_URL"] = args.generation_url
        _say_server(args.generation_url)
    if env.raw("TLAB_PUBLIC") is None and (args.share or not is_loopback(args.host)):
        os.environ["TLAB_PUBLIC"] = "1"  # reachable by strangers: model boxes take the allowlist only
    from backend.hub import get_hub
    from backend.runtime.device import on_zerogpu

    # On a Space the first visitor must not pay a load (or the ~30 s GGUF conversion, or the
    # offline sentiment classifier's one fine-tuning, which ZeroGPU leaves to a request's GPU call).
    if args.preload or on_zerogpu() or os.environ.get("SPACE_ID"):
        hub = get_hub()
        for role in ("encoder", "embedder", "decoder") + (() if on_zerogpu() else _trained_here(hub)):
            try:
                hub.load(role)
            except Exception as exc:  # a failed model fails only its tabs
                print(f"preload {role}: {exc}", file=sys.stderr)
    demo = served_app()
    import threading

    from backend.hub import sizing

    threading.Thread(target=sizing.warm, name="tlab-warm-door", daemon=True).start()  # the door's tokenizers
    demo.launch(**launch_options(args.host, args.port, args.share))
    return 0


if __name__ == "__main__":
    sys.exit(main())
