"""Who a request comes from: a *client* is an address, not a browser session.

Sessions cost nothing to mint: counted per session, a stranger with 20 throwaway sessions would hold 20 shares
of the training memory and every long-lane place. So what a visitor may hold (trained models, private
indexes, long jobs) is counted per client, and the sessions of one client share one share.

A client is the socket's address, or, behind a proxy that the operator trusts (TLAB_TRUST_FORWARDED;
on a Space the platform's proxy sets X-Forwarded-For), the address that proxy saw: the LAST entry of
X-Forwarded-For (TLAB_PROXY_HOPS=N: the Nth from the right, behind N trusted proxies). A proxy appends
the address it saw to what the caller sent, so every entry left of the trusted ones is the caller's
own word: taking the first one let a caller name any client it liked, one per request. Unset, TLAB_TRUST_FORWARDED is on only on a Space (SPACE_ID set), where every socket
is the proxy's and the forwarded address is the platform's own; anywhere else a forwarded header
is the caller's word and is ignored.

The shell binds each session to its client as a request joins the queue (`bind`); the stores ask
`client_of(session)`. A session never bound (a script, a test) is a client of its own.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import os
import threading
from typing import Callable

from cachetools import FIFOCache

from backend.runtime import env

MAX_SESSIONS = 50_000  # sessions remembered (about 100 bytes each); the oldest are forgotten first
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")  # what trust_forwarded takes

_LOCK = threading.Lock()
_SESSIONS: FIFOCache = FIFOCache(MAX_SESSIONS)  # session -> client; the least recently bound goes first
_CURRENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("tlab_client", default=None)
_OWNED: FIFOCache = FIFOCache(MAX_SESSIONS)  # a session's download folder -> its client (oldest claim goes first)
_current_session: Callable[[], str | None] = lambda: None  # noqa: E731  the shell plugs Gradio's in


def trust_forwarded() -> bool:
    """TLAB_TRUST_FORWARDED: 1 trusts X-Forwarded-For (its TLAB_PROXY_HOPS-th entry from the right), 0 never;
    unset: only on a Space. The one reader of the setting."""
    value = (env.read("TLAB_TRUST_FORWARDED", "") or "").strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    return bool(os.environ.get("SPACE_ID"))


def _clean(address: str | None) -> str | None:
    """An address as a client name (IPv6 cut to its /64: one host owns a whole /64), else None."""
    if not isinstance(address, str):
        return None
    address = address.strip().strip("[]")
    if not address or len(address) > 100:
        return None
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address if address.replace(".", "").replace("-", "").isalnum() else None  # "testclient" etc.
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address) + "/64"
    return str(ip)


def proxy_hops() -> int:
    """TLAB_PROXY_HOPS: how many trusted proxies append to X-Forwarded-For (1 on a Space)."""
    try:
        return min(max(int(env.read("TLAB_PROXY_HOPS")), 1), 8)
    except ValueError:
        return int(env.var("TLAB_PROXY_HOPS").default)


def address(socket_host: str | None, forwarded_for: str | None = None, trusted: bool | None = None,
            hops: int | None = None) -> str | None:
    """The client of a request: when trusted, the address the outermost trusted proxy saw (the
    `hops`-th entry of X-Forwarded-For from the right); else the socket's."""
    trusted = trust_forwarded() if trusted is None else trusted
    if trusted and isinstance(forwarded_for, str) and forwarded_for.strip():
        entries = [e for e in forwarded_for[:2000].split(",") if e.strip()]
        n = proxy_hops() if hops is None else hops
        seen = _clean(entries[-n]) if len(entries) >= n else None
        if seen is not None:
            return seen
    return _clean(socket_host)


def of_request(request) -> str | None:
    """The client of a request object (gr.Request or Starlette's): `.client.host` and its headers."""
    if request is None:
        return None
    client = getattr(request, "client", None)
    host = getattr(client, "host", None)
    headers = getattr(request, "headers", None)
    forwarded = None
    if headers is not None:
        try:
            forwarded = headers.get("x-forwarded-for")
        except Exception:  # noqa: BLE001  a headers object of another shape
            forwarded = None
    return address(host, forwarded)


def bind(session: str | None, client: str | None) -> None:
    """Remember that `session` comes from `client` (the latest request of a session decides)."""
    if not session or not client:
        return
    with _LOCK:
        _SESSIONS[session] = client


def client_of(session) -> str:
    """The client a session belongs to; a session never bound is its own client."""
    with _LOCK:
        found = _SESSIONS.get(session) if isinstance(session, str) else None
    return found if found is not None else f"session:{session}"


def sessions_of(client: str) -> list[str]:
    with _LOCK:
        return [s for s, c in _SESSIONS.items() if c == client]


def forget(session: str) -> None:
    with _LOCK:
        _SESSIONS.pop(session, None)


def clear() -> None:
    """Forget every binding (tests)."""
    with _LOCK:
        _SESSIONS.clear()


# ---------------------------------------------------------------- download folders
def own(folder, session: str) -> None:
    """`folder` (a session's private download folder) belongs to the session's client: its files are
    served only to that client (the upload gate checks each /file= request)."""
    claim(folder, client_of(session))


def claim(folder, client: str) -> None:
    """`folder` belongs to `client` (see `own`)."""
    with _LOCK:
        _OWNED[os.path.realpath(str(folder))] = client


def owner_of(path: str) -> str | None:
    """The client whose download folder holds `path`, or None (not a download folder's file)."""
    real = os.path.realpath(path)
    with _LOCK:
        for folder, client in _OWNED.items():
            if real == folder or real.startswith(folder + os.sep):
                return client
    return None


# ---------------------------------------------------------------- the request being served
def use_current_session(source: Callable[[], str | None]) -> None:
    """The shell says how to find the session of the request this thread serves."""
    global _current_session
    _current_session = source


@contextlib.contextmanager
def serving(client: str):
    """Run a block as a request of `client` (a script or a test that has no Gradio request)."""
    token = _CURRENT.set(client)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> str | None:
    """The client of the request this thread serves, or None outside a request (a script, a test)."""
    found = _CURRENT.get()
    if found is not None:
        return found
    try:
        session = _current_session()
    except Exception:  # noqa: BLE001  outside a request
        session = None
    return client_of(session) if session else None


def same_client(session: str, other: str | None = None) -> bool:
    """Does `session` belong to the client of `other` (default: the request being served)? Outside a
    request (None) there is nobody to refuse: True."""
    mine = client_of(other) if other is not None else current()
    return mine is None or client_of(session) == mine
