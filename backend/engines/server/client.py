"""The generation server seen from here: its health, what it serves, and whether its tokenizer is ours.

An OpenAI-compatible server (vLLM, ...) answers `/health` and `/v1/models`; vLLM also `/tokenize`.
Spoken with the `openai` package (the ecosystem's client for vLLM): one client per server, its
connection pool shared by every thread, no retries (a down server falls back in-process at once). Health
is cached (UP_TTL_S up, DOWN_TTL_S down) so a down server costs a request nothing after the first
time-out, and the lanes can ask "was it up?" without any network (`last_known_up`).
`remote_generation` runs generations on it.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass

import httpx2
import openai

from backend.engines.generation.setup import MAX_CONTEXT_TOKENS
from backend.runtime import config
from backend.runtime.errors import LabError

MAX_LOGPROBS = 20  # vLLM's default --max-logprobs: candidates per step the server returns
UP_TTL_S = 10.0  # a healthy server is re-checked after this long
DOWN_TTL_S = 3.0  # a down server is not asked again for this long (no time-out per request)
PROBE_TEXT = "The capital of France is Paris. 12 + 30 = 42 ünïcödé\n  indented"


class ServerUnavailable(LabError):
    """The server cannot run this request; the message says why and that it ran in-process."""


class ServerFailed(LabError):
    """The server stopped answering after part of a streamed answer was already shown."""

    def __init__(self, why: str, message: str):
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class Server:
    """One server as its `/v1/models` describes it."""

    url: str
    model: str  # the served model name (what requests name)
    kind: str = "vllm"  # "vllm", or "openai-compatible" for another server
    max_model_len: int | None = None
    max_logprobs: int = MAX_LOGPROBS

    def info(self) -> dict:
        """What a result says about where it ran."""
        return {"kind": self.kind, "url": self.url, "model": self.model}

    def context_limit(self) -> int:
        """Prompt + new tokens, as the in-process path allows (its model's positions, at most 2048)."""
        return int(min(self.max_model_len or MAX_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS))


def in_process(note: str | None = None) -> dict:
    """The `engine` field of a result generated in this process (`note`: why, when a server exists)."""
    return {"kind": "in-process", **({"note": note} if note else {})}


def configured_url() -> str:
    return config.get_settings().generation_url


# ----------------------------------------------------------------------------- health

_STATE: dict[str, tuple[float, Server | str]] = {}  # url -> (checked at, Server or why it is down)
_STATE_LOCK = threading.Lock()
_TOKENIZER_OK: dict[tuple, str | None] = {}  # (url, model, tokenizer) -> None (same), or why not


def _check_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerUnavailable(f"TLAB_GENERATION_URL {url!r} is not an http(s) URL; this ran in-process.")
    return url.rstrip("/")


def on_this_machine(url: str) -> bool:
    """Does the server at `url` run on this machine's cores (a loopback address)?"""
    host = urllib.parse.urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


@functools.lru_cache(maxsize=8)
def client(url: str) -> openai.OpenAI:
    """The OpenAI client of the server at `url` (no API key: vLLM's default; no retries)."""
    return openai.OpenAI(base_url=_check_url(url) + "/v1", api_key="EMPTY", max_retries=0)


def call(url: str, method: str, path: str, body: dict | None, timeout: float):
    """One JSON request to a route outside the OpenAI API (`/health`, vLLM's `/tokenize`) -> the raw
    response; openai's errors (APIStatusError for a non-2xx answer, APIConnectionError, APITimeoutError)."""
    c, target = client(url), _check_url(url) + path
    if method == "POST":
        return c.post(target, cast_to=httpx2.Response, body=body, options={"timeout": timeout})
    return c.get(target, cast_to=httpx2.Response, options={"timeout": timeout})


def open_completion(url: str, body: dict, timeout: float):
    """A streamed `/v1/completions` for `body` (vLLM's own knobs go as extra fields) -> openai's Stream,
    once the server answered (its headers within `timeout`). Closing the stream closes the connection,
    which aborts the request in the server."""
    known = ("model", "prompt", "max_tokens", "n", "temperature", "top_p", "logprobs", "presence_penalty",
             "frequency_penalty", "seed", "stream")
    return client(url).completions.create(**{k: body[k] for k in known if k in body},
                                          extra_body={k: v for k, v in body.items() if k not in known},
                                          timeout=timeout)


def read_timeout(stream, seconds: float) -> None:
    """Let each later read of a stream wait `seconds` (the headers came within the connect time-out; the
    tokens may come slower, up to the request's budget). The transport reads each body read's time-out
    from the request's `timeout` extension when the body starts, which is at the stream's first item."""
    stream.response.request.extensions.setdefault("timeout", {})["read"] = seconds


def _chain(exc: BaseException) -> list[BaseException]:
    out = [exc]
    while out[-1].__cause__ is not None or out[-1].__context__ is not None:
        nxt = out[-1].__cause__ or out[-1].__context__
        if nxt in out:
            break
        out.append(nxt)
    return out


TIMEOUTS = (socket.timeout, TimeoutError, httpx2.TimeoutException, openai.APITimeoutError)
FAILURES = (OSError, ValueError, httpx2.HTTPError, openai.APIError)  # what a broken server raises here


def failure_reason(exc: BaseException) -> str:
    chain = _chain(exc)
    if any(isinstance(e, TIMEOUTS) for e in chain):
        return "no answer within the time-out"
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if isinstance(exc, (ValueError, ConnectionResetError)) and str(exc).startswith("it "):
        return str(exc)
    if isinstance(exc, openai.APIStatusError):
        return status_text(exc)
    if isinstance(exc, openai.APIError) and not isinstance(exc, openai.APIConnectionError):
        return f"it reported an error: {exc.message[:160]}"
    return f"{type(exc).__name__}: {exc}"[:160]


def status_text(exc: openai.APIStatusError) -> str:
    """A refusal in the server's own words: "HTTP 400: <its message>"."""
    body = exc.body
    msg = body.get("message", body) if isinstance(body, dict) else body
    return f"HTTP {exc.status_code}: {str(msg if msg is not None else exc.message)[:200]}"


def down_message(url: str, why: str) -> str:
    return f"The generation server at {url} did not answer ({why}); this ran in-process."


def probe(url: str, timeout: float | None = None) -> Server:
    """Ask `/health` and `/v1/models` (network, short time-out); -> Server, or ServerUnavailable."""
    timeout = config.get_settings().generation_timeout_s if timeout is None else timeout
    try:
        call(url, "GET", "/health", None, timeout)
        models = client(url).models.list(timeout=timeout).data
    except openai.APIStatusError as exc:
        where = "/health" if "/health" in str(exc.request.url) else "/v1/models"
        raise ServerUnavailable(down_message(url, f"{where} answered {exc.status_code}")) from None
    except FAILURES as exc:
        raise ServerUnavailable(down_message(url, failure_reason(exc))) from None
    if not models:
        raise ServerUnavailable(down_message(url, "/v1/models answered 200 with no model"))
    first = models[0]
    return Server(url=url, model=str(first.id), kind="vllm" if first.owned_by == "vllm" else "openai-compatible",
                  max_model_len=getattr(first, "max_model_len", None))


def server(url: str | None = None, refresh: bool = False) -> Server:
    """The server at `url` (default TLAB_GENERATION_URL), health-checked at most every UP_TTL_S;
    a down server is not asked again for DOWN_TTL_S, so requests then fall back at once."""
    url = (url or configured_url()).rstrip("/")
    now = time.monotonic()
    with _STATE_LOCK:
        seen = _STATE.get(url)
    if seen is not None and not refresh:
        at, state = seen
        if isinstance(state, Server) and now - at < UP_TTL_S:
            return state
        if isinstance(state, str) and now - at < DOWN_TTL_S:
            raise ServerUnavailable(state)
    try:
        state: Server | str = probe(url)
    except ServerUnavailable as exc:
        state = str(exc)
    with _STATE_LOCK:
        _STATE[url] = (time.monotonic(), state)
    if isinstance(state, str):
        raise ServerUnavailable(state)
    return state


def mark_down(url: str, message: str) -> None:
    with _STATE_LOCK:
        _STATE[url] = (time.monotonic(), message)


def last_known_up(url: str | None = None) -> bool:
    """Was the server up at its last check? No network: the lanes ask this as a request queues."""
    url = (url or configured_url()).rstrip("/")
    if not url:
        return False
    with _STATE_LOCK:
        seen = _STATE.get(url)
    return seen is not None and isinstance(seen[1], Server)


def forget() -> None:
    """Drop every cached health and tokenizer check (tests; a restarted server)."""
    with _STATE_LOCK:
        _STATE.clear()
        _TOKENIZER_OK.clear()


# ----------------------------------------------------------------------------- tokenizer check


def check_tokenizer(eng: Server, tokenizer) -> str | None:
    """Refuse a server whose tokenizer gives other ids than ours (ServerUnavailable); -> a warning
    when the server cannot be asked (no /tokenize), None when the ids match. Cached per server."""
    key = (eng.url, eng.model, getattr(tokenizer, "name_or_path", ""), len(tokenizer))
    if key in _TOKENIZER_OK:
        verdict = _TOKENIZER_OK[key]
    else:
        ours = tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]
        try:
            got = call(eng.url, "POST", "/tokenize", {"model": eng.model, "prompt": PROBE_TEXT,
                                                      "add_special_tokens": False},
                       config.get_settings().generation_timeout_s).json()
            status = 200
        except openai.APIStatusError as exc:
            status, got = exc.status_code, {}
        except FAILURES as exc:
            raise ServerUnavailable(down_message(eng.url, failure_reason(exc))) from None
        if status != 200 or "tokens" not in got:
            verdict = (f"The server at {eng.url} cannot tokenize (/tokenize answered {status}), so it was not "
                       "checked that its tokenizer matches this model's; prompts were sent as this model's token ids.")
        elif list(got["tokens"]) != list(ours):
            verdict = "mismatch"
        else:
            verdict = None
        _TOKENIZER_OK[key] = verdict
    if verdict == "mismatch":
        raise ServerUnavailable(f"The generation server at {eng.url} serves {eng.model}, whose tokenizer gives other "
                                f"token ids than {getattr(tokenizer, 'name_or_path', 'this model')}'s; this ran "
                                "in-process.")
    return verdict
