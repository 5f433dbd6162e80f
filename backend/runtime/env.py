"""Every `TLAB_` environment variable the code reads, in one registry: its default and what it sets.

The code reads a variable only through `read(name)` (or `is_set`), which refuses a name not listed
here, so a new setting cannot be read without being documented. `docs/settings.md`'s table is
generated from `VARS` (`python -m backend.runtime.env --write`; `--check` says whether it is current),
and tests/unit/backend/runtime/test_env.py fails when the page and the registry differ or when code reads a
`TLAB_` variable some other way.

`default` is the raw value `read` returns when the variable is unset (None: unset has a meaning of its
own, written in `shown`, e.g. a default that depends on public mode). `scope`: "app" (the server),
"notebook" (read where a downloaded notebook runs, not where the app runs), "tests" (the test and
benchmark harnesses).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Var:
    name: str
    default: str | None
    meaning: str
    shown: str = ""  # the default as the page states it, where it is not `default` itself
    scope: str = "app"

    def shown_default(self) -> str:
        return self.shown or ("-" if self.default in (None, "") else self.default)


UPLOAD_WINDOW = "120 s"  # said in the upload and download rows (components/shell/session_memory.py keeps it)

VARS: tuple[Var, ...] = (
    Var("TLAB_PROFILE", "auto", "the profile: `auto`, `book` or `local` (same as `--profile`)"),
    Var("TLAB_MODEL_<ROLE>", None, "a checkpoint (Hub id or local dir) for one role, e.g. `TLAB_MODEL_DECODER`"),
    Var("TLAB_MODEL_DIRS", "", "folders (`os.pathsep`-separated) whose models a visitor may load in public mode"),
    Var("TLAB_PUBLIC", None, "`1` public mode (model boxes take the allowlist only, private data lives with its "
        "session, the budgets hold), `0` not", shown="on a Space, with `--share` or a non-loopback host: 1; else 0"),
    Var("TLAB_CACHE_DIR", None, "converted GGUF models, the models built here, search indexes",
        shown="`~/.cache/transformers-lab`"),
    Var("TLAB_DEVICE", "auto", "`cpu` or `cuda`; `auto` takes CUDA when there is one"),
    Var("TLAB_HUB_TIMEOUT", "2.0", "seconds `auto` waits for the Hub to answer (asked once per process)"),
    Var("TLAB_MODEL_CONCURRENCY", "1", "model jobs at once per lane (docs/lanes.md)"),
    Var("TLAB_MAX_TOKENIZE_CHARS", "20000", "the longest text the tokenizer explorer takes"),
    Var("TLAB_TIME_BUDGET_S", "120", "seconds of work per request; generation then returns the text so far "
        "(finish_reason `time budget`), other jobs stop with a message (0 = no limit)"),
    Var("TLAB_REQUEST_MEMORY_MB", "2048", "memory one request's generation may hold (key/value cache x beams, kept "
        "logits, attention scores), estimated before any forward; over it the request is refused with what would "
        "fit, and a request whose process grew by twice this stops (finish_reason `memory budget`)",
        shown="2048, or less where the models plus two such shares per long slot would not fit the machine"),
    Var("TLAB_PUBLIC_MAX_PASSAGES", "20000", "passages one index build may take in public mode"),
    Var("TLAB_TRAIN_SESSION_MB", "1024", "memory all sessions' trained classifiers may hold together"),
    Var("TLAB_SCRATCH_GPT_MB", "256", "memory all sessions' tiny GPTs (From scratch) may hold together"),
    Var("TLAB_BATCH_MAX", "16", "short requests (classify, zero-shot, search) batched into one forward; `1` = one "
        "at a time"),
    Var("TLAB_FAIR_THREADS", "1", "`0` stops splitting the CPU's torch threads between the jobs running at once"),
    Var("TLAB_KEEP_ITEMS_S", "900", "a visitor's private index or trained model used this recently is never "
        "evicted for someone else; a newcomer is refused instead"),
    Var("TLAB_KEEP_MAX_AGE_S", None, "... but only this long after it was made: calling a model does not keep it "
        "reserved for ever", shown="3 x `TLAB_KEEP_ITEMS_S`"),
    Var("TLAB_CLIENT_SHARE", None, "the share of each store (training memory and places, tiny GPTs, "
        "encoder-decoders, private indexes) and of the long lane's places that one client may hold, whatever "
        "number of pages it opens; a classroom behind one address shares one share: raise it (up to 1) on a "
        "server of your own", shown="0.25 in public mode, else 1"),
    Var("TLAB_TRUST_FORWARDED", None, "how a client is named: `1` takes the address your proxy saw (the last "
        "entry of `X-Forwarded-For`, set by a proxy you trust), `0` the socket's address; never trust it where "
        "callers reach the app directly, since they can write the header", shown="on a Space: 1; else 0"),
    Var("TLAB_PROXY_HOPS", "1", "behind more than one trusted proxy, how many: the client is the address the "
        "outermost one saw, that many entries from the right of `X-Forwarded-For` (1 to 8)"),
    Var("TLAB_QUEUE_MAX", "64", "requests waiting in Gradio's queue, all lanes together; more are refused at once"),
    Var("TLAB_UPLOAD_FOLDER_MB", "1024", "the upload folder's cap: an upload that would take the folder past it "
        f"is refused before a byte is stored (HTTP 413); the oldest uploads are cleared after {UPLOAD_WINDOW}"),
    Var("TLAB_UPLOAD_CLIENT_MB", "256", f"what one client (an address) may upload per {UPLOAD_WINDOW}, whatever "
        "number of pages it opens"),
    Var("TLAB_DOWNLOAD_FOLDER_MB", "512", "all the download zips (trained models) together; the oldest go first "
        f"(never one younger than {UPLOAD_WINDOW}), and the next Download click makes it again"),
    Var("TLAB_SEARCH_MAX_MB", "50", "the largest corpus one index build reads, in MB"),
    Var("TLAB_SEARCH_MAX_PASSAGES", "200000", "passages one index holds at most"),
    Var("TLAB_SEARCH_SESSION_MB", "2048", "memory all sessions' private indexes may hold together"),
    Var("TLAB_GENERATION_URL", "", "the generation server (an OpenAI-compatible engine such as vLLM) the decoder "
        "roles may run on; empty: everything in-process (same as `--generation-url`)"),
    Var("TLAB_GENERATION_TIMEOUT_S", "2.0", "seconds a call to the generation server may wait for its answer"),
    Var("TLAB_GENERATION_CONCURRENCY", "16", "generation requests the decode lane sends the generation server at once"),
    Var("TLAB_SETTINGS_TOKEN", "", "a token that lets `POST /tlab/settings` change the live limits on a server of "
        "your own (never on a Space); empty: the route is off"),
    Var("TLAB_CHECKOUT", None, "a checkout of Transformers Lab, for the two notebooks that import the app's own "
        "from-scratch modules (the tiny GPT and the tiny encoder-decoder)",
        shown="the checkout that made the run, on a server that is not public", scope="notebook"),
    Var("TLAB_TEST_LANE", "", "the test lane a pytest process runs in (`scripts/test_lanes.py` sets it): its own "
        "app log", scope="tests"),
    Var("TLAB_TEST_APP_ON_ZEROGPU", "", "`1`: the browser lane's shared app runs under the fake ZeroGPU "
        "`spaces` module", scope="tests"),
    Var("TLAB_REQUIRE_SPACE_VENV", "", "`1`: a missing Space virtualenv fails tests/space instead of skipping",
        scope="tests"),
    Var("TLAB_REQUIRE_SERVER", "", "`1`: a missing generation-server virtualenv fails tests/server instead of "
        "skipping", scope="tests"),
    Var("TLAB_SERVER_TEST_URL", "", "tests/server uses a generation server already running here", scope="tests"),
    Var("TLAB_REQUIRE_GPU", "", "`1`: no CUDA fails tests/gpu instead of skipping (`scripts/gpu_check.sh`)",
        scope="tests"),
    Var("TLAB_GPU_DRY_RUN", "", "`cpu`: `scripts/gpu_check.sh` runs its checks on the CPU", scope="tests"),
    Var("TLAB_GPU_TOKENIZERS", "", "the tokenizers folder `scripts/gpu_check.sh` carries to the GPU machine",
        scope="tests"),
    Var("TLAB_CHROMIUM", "", "the Chromium the browser tests drive", shown="`/usr/bin/chromium`", scope="tests"),
    Var("TLAB_EXTREMES_TABLE", "", "where the endpoint-extremes suite writes its table",
        shown="tests/artifacts/endpoint_extremes.md", scope="tests"),
    Var("TLAB_BLIND_6", "", "`1`: bench/qa_answer_type.py also scores the sixth blind question set",
        scope="tests"),
)
REGISTRY: dict[str, Var] = {v.name: v for v in VARS}
_PATTERNS = [(re.compile("^" + re.escape(v.name).replace(re.escape("<ROLE>"), "[A-Z_]+") + "$"), v)
             for v in VARS if "<" in v.name]


def var(name: str) -> Var:
    """The registry's entry for `name` (a role's `TLAB_MODEL_DECODER` is `TLAB_MODEL_<ROLE>`'s); KeyError if none."""
    if name in REGISTRY:
        return REGISTRY[name]
    for pattern, v in _PATTERNS:
        if pattern.match(name):
            return v
    raise KeyError(f"{name} is not in backend/runtime/env.py's registry: add it there (and to docs/settings.md)")


def read(name: str, default: str | None = None) -> str | None:
    """The variable's value now; unset: `default` if given, else the registry's default."""
    entry = var(name)
    return os.environ.get(name, entry.default if default is None else default)


def raw(name: str) -> str | None:
    """The variable as set, None when unset (for code that tells the two apart)."""
    var(name)
    return os.environ.get(name)


def is_set(name: str) -> bool:
    """Whether the variable is set to something other than blanks."""
    return bool((read(name, "") or "").strip())


# ----------------------------------------------------------------------------- docs/settings.md
DOC = Path(__file__).resolve().parents[2] / "docs" / "settings.md"
BEGIN, END = "<!-- settings table: generated by `python -m backend.runtime.env --write` -->", "<!-- end of the table -->"
HEADINGS = {"app": "The server", "notebook": "Where a downloaded notebook runs", "tests": "Tests and benchmarks"}


def table() -> str:
    """The generated part of docs/settings.md: one table per scope."""
    out = [BEGIN]
    for scope, heading in HEADINGS.items():
        out += ["", f"### {heading}", "", "| variable | default | what it sets |", "|---|---|---|"]
        out += [f"| `{v.name}` | {v.shown_default()} | {v.meaning} |" for v in VARS if v.scope == scope]
    return "\n".join(out + ["", END])


def rendered(text: str) -> str:
    """`text` (the page) with its table replaced by the registry's."""
    head, rest = text.split(BEGIN, 1)
    return head + table() + rest.split(END, 1)[1]


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    want = rendered(text)
    if "--write" in argv:
        DOC.write_text(want, encoding="utf-8")
        return 0
    if want != text:
        print("docs/settings.md differs from backend/runtime/env.py: run python -m backend.runtime.env --write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
