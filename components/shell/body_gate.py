"""The request body, bounded before anything parses it, and a malformed body answered in words.

Why: Starlette read and parsed a 300 MB JSON body (+729 MB) before Gradio refused it for its argument count,
and a body that was not the shape an API route takes got pydantic's raw 422 dump. `BodyGate` (ASGI middleware,
in front of every route but the upload route, which `upload_gate` bounds per file and per client) refuses a
declared Content-Length over `body_cap()` with a readable 413 before a byte is read, and cuts a body that
arrives without one (chunked) at the cap; `readable_validation_error` turns FastAPI's 422 into a 400 whose
message names what is wrong.

The cap: the largest value any endpoint takes is a pasted corpus of TLAB_SEARCH_MAX_MB (its text, JSON-escaped,
may grow by half), plus a megabyte for the rest of the body.
"""

from __future__ import annotations

from backend.runtime.config import SearchLimits
from components.shell.upload_gate import _drain, cut_at, send_json

ESCAPING = 1.5  # JSON text of a pasted corpus: quotes, newlines and non-ASCII escaped
SLACK = 2**20
NO_BODY = ("GET", "HEAD")  # every other method's body is bounded
DRAIN_MAX = 2**30  # a refused body up to this size is read and dropped before the answer; a bigger one is cut


def body_cap() -> int:
    """Bytes one request body may hold (read per request: TLAB_SEARCH_MAX_MB may change live)."""
    return int(SearchLimits.from_env().max_bytes * ESCAPING) + SLACK


def _too_big(size: int, cap: int) -> str:
    return (f"The request body is {size / 2**20:,.1f} MB; this server reads at most {cap / 2**20:,.1f} MB in one "
            "request (the largest pasted corpus, TLAB_SEARCH_MAX_MB, and the rest). Send less, or upload a file.")


class BodyGate:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("method") in NO_BODY \
                or scope.get("path", "").rstrip("/").endswith("/upload"):
            return await self.app(scope, receive, send)
        cap = body_cap()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            why = _too_big(int(declared), cap)
            if int(declared) <= DRAIN_MAX:  # read and drop it (nothing is kept), so that a client that sends
                await _drain(receive)  # all of its body before it reads the answer gets the sentence, not a reset
            return await send_json(send, 413, {"detail": why, "error": why})
        await self.app(scope, cut_at(receive, cap), send)  # no Content-Length, or more than it said: cut at the cap


def readable_validation_error(request, exc):
    """FastAPI's RequestValidationError (a body that is not JSON, or not the shape the route takes) -> a 400 that
    says so in words, naming the first field pydantic could not read."""
    from fastapi.responses import JSONResponse

    errors = exc.errors() if hasattr(exc, "errors") else []
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "the body"
    kind = str(first.get("type", ""))
    if "json" in kind:
        message = "The request body is not valid JSON: send a JSON object such as {\"data\": [...]}."
    else:
        message = (f"The request body is not what this route takes: {where} "
                   f"{'is missing' if kind == 'missing' else 'has the wrong type or shape'}. "
                   "Send {\"data\": [...]} with one value per argument (/gradio_api/info lists them).")
    return JSONResponse({"detail": message, "error": message}, status_code=400)


def middleware() -> list:
    from starlette.middleware import Middleware

    return [Middleware(BodyGate)]


def exception_handlers() -> dict:
    from fastapi.exceptions import RequestValidationError

    return {RequestValidationError: readable_validation_error}
