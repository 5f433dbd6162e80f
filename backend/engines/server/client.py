"""The generation server seen from here: its health, what it serves, and whether its tokenizer is ours.

An OpenAI-compatible server (vLLM, ...) answers `/health` and `/v1/models`; vLLM also
`/tokenize`. Plain `http.client` (no new dependency). Health is cached (UP_TTL_S up,
DOWN_TTL_S down) so a down server costs a request nothing after the first time-out, and the
lanes can ask "was it up?" without any network (`last_known_up`). `remote_generation` runs
generations on it.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass

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


def _split(url: str) -> tuple[type, str, int | None, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerUnavailable(f"TLAB_GENERATION_URL {url!r} is not an http(s) URL; this ran in-process.")
    conn = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return conn, parts.hostname, parts.port, parts.path.rstrip("/")


def on_this_machine(url: str) -> bool:
    """Does the server at `url` run on this machine's cores (a loopback address)?"""
    host = urllib.parse.urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def open_request(url: str, method: str, path: str, body: dict | None, timeout: float):
    """Open one request; -> (connection, response). The caller closes the connection."""
    conn_cls, host, port, base = _split(url)
    conn = conn_cls(host, port, timeout=timeout)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    try:
        conn.request(method, base + path, body=data, headers=headers)
        return conn, conn.getresponse()
    except BaseException:
        conn.close()
        raise


def _get_json(url: str, method: str, path: str, body: dict | None, timeout: float) -> tuple[int, dict]:
    conn, resp = open_request(url, method, path, body, timeout)
    try:
        raw = resp.read()
        try:
            return resp.status, json.loads(raw or b"{}")
        except ValueError:
            return resp.status, {"message": raw[:200].decode("utf-8", "replace")}
    finally:
        conn.close()


def failure_reason(exc: BaseException) -> str:
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "no answer within the time-out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, (ValueError, ConnectionResetError)) and str(exc).startswith("it "):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"[:160]


def down_message(url: str, why: str) -> str:
    return f"The generation server at {url} did not answer ({why}); this ran in-process."


def probe(url: str, timeout: float | None = None) -> Server:
    """Ask `/health` and `/v1/models` (network, short time-out); -> Server, or ServerUnavailable."""
    timeout = config.get_settings().generation_timeout_s if timeout is None else timeout
    try:
        status, _ = _get_json(url, "GET", "/health", None, timeout)
        if status != 200:
            raise ServerUnavailable(down_message(url, f"/health answered {status}"))
        status, listing = _get_json(url, "GET", "/v1/models", None, timeout)
    except ServerUnavailable:
        raise
    except (OSError, http.client.HTTPException) as exc:
        raise ServerUnavailable(down_message(url, failure_reason(exc))) from None
    models = listing.get("data") or []
    if status != 200 or not models:
        raise ServerUnavailable(down_message(url, f"/v1/models answered {status} with no model"))
    first = models[0]
    owner = str(first.get("owned_by") or "")
    return Server(url=url, model=str(first.get("id")), kind="vllm" if owner == "vllm" else "openai-compatible",
                  max_model_len=first.get("max_model_len"))


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
            status, got = _get_json(eng.url, "POST", "/tokenize",
                                    {"model": eng.model, "prompt": PROBE_TEXT, "add_special_tokens": False},
                                    config.get_settings().generation_timeout_s)
        except (OSError, http.client.HTTPException) as exc:
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
