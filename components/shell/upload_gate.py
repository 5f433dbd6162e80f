"""Uploads bounded at the door, and downloads served to their owner: the upload folder
never holds more than its cap; a trained model's zip goes only to the client (address) that made it.

The folder's janitor (session_memory.keep_uploads_bounded) deletes the oldest files beyond the cap, but
never one younger than its grace (its request may be about to read it), so the folder's bound was
the cap plus what arrives in the grace: 24 files of 59 MB in 39 s took a 64 MB folder to 1.58 GB.
`UploadGate`, an ASGI middleware in front of Gradio's upload route, decides before a byte is stored,
from the request's declared size (Content-Length; one without it is refused):

- a request larger than `UPLOAD_MAX_FILES` files of Gradio's `max_file_size` is refused (Gradio's own
  `max_file_size` then refuses any one file over it while its bytes arrive);
- a client (an address: backend/runtime/clients.py) may upload `TLAB_UPLOAD_CLIENT_MB` per grace
  window, whatever number of sessions it opens;
- the folder's size, plus what is arriving now, plus this request, must stay within its cap (the
  oldest files past their grace are deleted first to make room, as the janitor would; what counts is
  everything in the folder but the stores' download folders, Gradio's cached outputs included).

A refusal is HTTP 413 with a sentence that says which limit and when it frees up. The body is counted
as it arrives and cut off past its declared size.

A download (`GET .../file=<path>`) from a store's download folder (`clients.own`) is refused (404) to any
other client: the links were bearer links, good from anywhere for as long as the file lived.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque

from backend.runtime import clients, downloads
from backend.runtime import env
from components.shell import session_memory

UPLOAD_CLIENT_MAX_MB = float(env.var("TLAB_UPLOAD_CLIENT_MB").default)  # per client per grace window (TLAB_UPLOAD_CLIENT_MB)
FILE_MAX_MB = 60  # Gradio's max_file_size (app.py passes it to launch)
SIZE_EVERY_S = 1.0  # how often the folder is measured again (between, arrivals are added as they land)


def folder_cap() -> int:
    return session_memory.mb_setting("TLAB_UPLOAD_FOLDER_MB", session_memory.UPLOAD_FOLDER_MAX_MB)


def client_cap() -> int:
    return session_memory.mb_setting("TLAB_UPLOAD_CLIENT_MB", UPLOAD_CLIENT_MAX_MB)


def request_cap() -> int:
    """The largest upload request: a few files of max_file_size, plus the multipart framing."""
    return session_memory.UPLOAD_MAX_FILES * FILE_MAX_MB * 1024 * 1024 + 64 * 1024


def folder_bytes(folder: str) -> int:
    """The uploads' bytes in the folder (the stores' download zips have their own cap: session_memory)."""
    return downloads.folder_bytes(folder, lambda name: name.startswith(session_memory.DOWNLOAD_PREFIX))


class UploadBook:
    """Who uploaded what in the last grace window, what is arriving now, and the folder's size."""

    def __init__(self, folder: str | None = None, window_s: float = session_memory.UPLOAD_GRACE_S):
        self.folder = folder
        self.window_s = window_s
        self.lock = threading.Lock()
        self.recent: dict[str, deque] = defaultdict(deque)  # client -> (time, bytes) of its uploads
        self.arriving = 0  # bytes reserved by uploads in progress
        self._size, self._measured = 0, -1e9

    def _folder_size(self, now: float) -> int:
        if now - self._measured >= SIZE_EVERY_S:
            self._size = folder_bytes(self.folder or session_memory.upload_folder())
            self._measured = now
        return self._size

    def _client_bytes(self, client: str, now: float) -> int:
        for c in [c for c, q in self.recent.items() if not q or now - q[-1][0] > self.window_s]:
            del self.recent[c]  # addresses with nothing in the window: forgotten (any number may pass)
        q = self.recent[client]
        while q and now - q[0][0] > self.window_s:
            q.popleft()
        return sum(n for _, n in q)

    def reserve(self, client: str, nbytes: int, now: float | None = None) -> str | None:
        """Reserve room for an upload of `nbytes` from `client`; None when admitted, else why not."""
        now = time.monotonic() if now is None else now
        mb = lambda n: f"{n / 2**20:,.0f} MB"  # noqa: E731
        if nbytes > request_cap():
            return (f"This upload is {mb(nbytes)}: one upload takes at most {session_memory.UPLOAD_MAX_FILES} files of "
                    f"{FILE_MAX_MB} MB each. Upload a smaller file.")
        with self.lock:
            mine, cap = self._client_bytes(client, now), client_cap()
            if nbytes > cap:
                return (f"This upload is {mb(nbytes)}; each address may upload at most {mb(cap)} per "
                        f"{self.window_s:.0f} s. Upload a smaller file.")
            if mine + nbytes > cap:
                wait = self.window_s - (now - self.recent[client][0][0]) if self.recent[client] else self.window_s
                return (f"Your address uploaded {mb(mine)} in the last {self.window_s:.0f} s; each address may upload "
                        f"{mb(cap)} per {self.window_s:.0f} s (its share of the upload space, whatever number of "
                        f"pages it opens). Try again in {max(1, wait):.0f} s.")
            held, limit = self._folder_size(now) + self.arriving, folder_cap()
            if held + nbytes > limit:  # make room now, as the janitor would: the oldest files past their grace
                folder = self.folder or session_memory.upload_folder()
                session_memory.trim_upload_folder(folder, max(0, limit - self.arriving - nbytes))
                self._measured = -1e9
                held = self._folder_size(now) + self.arriving
            if held + nbytes > limit:
                return (f"The server's upload space is full ({mb(held)} of {mb(limit)}): older uploads are cleared "
                        f"{self.window_s:.0f} s after they arrive. Try again in a few minutes.")
            self.arriving += nbytes
            self.recent[client].append((now, nbytes))
            return None

    def landed(self, nbytes: int) -> None:
        """An upload ended (stored or not): its bytes count in the folder's size from now on."""
        with self.lock:
            self.arriving -= nbytes
            self._size += nbytes  # until the next measurement says what really stayed


BOOK = UploadBook()


class UploadGate:
    """ASGI middleware: `POST .../upload` is admitted by `BOOK` before Gradio reads a byte of it."""

    def __init__(self, app, book: UploadBook | None = None):
        self.app = app
        self.book = book or BOOK

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        upload = scope.get("method") == "POST" and path.rstrip("/").endswith("/upload")
        download = "/file=" in path and scope.get("method") in ("GET", "HEAD")
        if not (upload or download):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = (scope.get("client") or (None,))[0]
        client = clients.address(host, headers.get("x-forwarded-for")) or "unknown"
        if download:  # a trained model's zip is served to the client (address) that made it, no other
            owner = clients.owner_of(path.split("/file=", 1)[1])
            if owner is not None and owner != client:
                return await _refuse(send, 404, "This download belongs to another visitor: a download link works "
                                                "only from the address that made it. Make your own in its tab.")
            return await self.app(scope, receive, send)
        try:
            declared = int(headers.get("content-length", ""))
        except ValueError:
            return await _refuse(send, 411, "An upload must say its size (a Content-Length header).")
        why = self.book.reserve(client, declared)
        if why is not None:
            if declared <= request_cap():  # read and drop the body (nothing is stored), so the client,
                await _drain(receive)  # which sends all of it before it reads, gets the sentence
            return await _refuse(send, 413, why)
        counted = cut_at(receive, declared)  # more than it said: cut off there

        reply = []

        async def noted(message):  # the reply lists the stored paths: they belong to this client
            if message.get("type") == "http.response.body":
                reply.append(message.get("body", b""))
                if not message.get("more_body", False):
                    _claim_uploads(b"".join(reply), client)
            await send(message)

        try:
            await self.app(scope, counted, noted)
        finally:
            self.book.landed(declared)


def _claim_uploads(body: bytes, client: str) -> None:
    """The upload route's reply (a JSON list of stored paths): each path belongs to `client`, so another
    address that learns it cannot pass it to an endpoint (`door.foreign_upload`) or fetch it (/file=)."""
    try:
        paths = json.loads(body or b"[]")
    except ValueError:
        return
    for path in paths if isinstance(paths, list) else ():
        if isinstance(path, str):
            clients.claim(path, client)


def cut_at(receive, limit: int):
    """`receive`, reading as a disconnect once the body has passed `limit` bytes (so nothing reads past it)."""
    seen = 0

    async def counted():
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                return {"type": "http.disconnect"}
        return message

    return counted


async def _drain(receive) -> None:
    while True:
        message = await receive()
        if message.get("type") != "http.request" or not message.get("more_body", False):
            return


async def _refuse(send, status: int, message: str) -> None:
    await send_json(send, status, {"detail": message})


async def send_json(send, status: int, payload: dict) -> None:
    """An ASGI JSON answer sent by a middleware itself (this gate's refusals, live_settings' replies)."""
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def middleware() -> list:
    """What app.py passes to launch(app_kwargs={"middleware": ...})."""
    from starlette.middleware import Middleware

    return [Middleware(UploadGate)]
