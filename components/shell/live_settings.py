"""Settings an operator may change on a running app, without a restart: `POST /tlab/settings`.

The limits below are read from the environment on every request (each reader is named in LIVE), so a
new value holds from the next request on. The route exists only when the process starts with
TLAB_SETTINGS_TOKEN set, and never on a Space (SPACE_ID): a caller must send that token
(`Authorization: Bearer ...`). Off, the path is Gradio's as any other (a 404).

    POST /tlab/settings  {"TLAB_TIME_BUDGET_S": "45", "TLAB_TRUST_FORWARDED": null}
        -> 200 {"TLAB_TIME_BUDGET_S": "45", ...}: every live key's value now (null: unset)

A value of null puts the key back as the process started with it. Why it exists: the test suite runs a few
apps and changes their limits between tests (a 45 s budget for one module, quotas for another) instead
of starting an app per limit (each start loads models for 15-25 s); an operator can do the same.
"""

from __future__ import annotations

import hmac
import json
import os

from backend.runtime import clients, env
from components.shell.upload_gate import send_json

PATH = "/tlab/settings"
TOKEN_VAR = "TLAB_SETTINGS_TOKEN"
MAX_BODY = 4096

# Each live key, and the one function that reads it on each call (tests/unit/test_live_settings.py
# changes every key and checks its reader sees the new value).
LIVE: dict[str, str] = {
    "TLAB_TIME_BUDGET_S": "backend.runtime.budget.default_seconds",
    "TLAB_REQUEST_MEMORY_MB": "backend.runtime.memory_budget (get_settings().request_memory_mb)",
    "TLAB_TRAIN_SESSION_MB": "backend.train.store.get_store (the store's memory budget, set on each get)",
    "TLAB_TRUST_FORWARDED": "backend.runtime.clients.trust_forwarded",
    "TLAB_UPLOAD_CLIENT_MB": "components.shell.upload_gate.client_cap",
    "TLAB_UPLOAD_FOLDER_MB": "components.shell.upload_gate.folder_cap (and the upload janitor's next pass)",
}

# The largest value each number may take: past these a reader's arithmetic stops meaning anything (a budget of
# 1e308 s overflowed a deadline; a memory share over the machine's memory guards nothing).
DAY_S = 86_400.0
UPPER: dict[str, float] = {"TLAB_TIME_BUDGET_S": DAY_S, "TLAB_REQUEST_MEMORY_MB": 1 << 20,
                           "TLAB_TRAIN_SESSION_MB": 1 << 20, "TLAB_UPLOAD_CLIENT_MB": 1 << 20,
                           "TLAB_UPLOAD_FOLDER_MB": 1 << 20}

_AT_START: dict[str, str | None] = {key: env.raw(key) for key in LIVE}
_SWITCHES = {"TLAB_TRUST_FORWARDED": clients.TRUE_WORDS + clients.FALSE_WORDS}  # the words its reader takes; the rest: numbers >= 0


def enabled() -> bool:
    """A token was given at start, and this is no Space (a Space's visitors are strangers)."""
    return env.is_set(TOKEN_VAR) and not os.environ.get("SPACE_ID")


def current() -> dict[str, str | None]:
    return {key: env.raw(key) for key in LIVE}


def apply(changes: dict) -> dict[str, str | None]:
    """Set (a string or a number) or restore (None) live keys; anything else raises ValueError, changing nothing."""
    if not isinstance(changes, dict):
        raise ValueError("send a JSON object of settings, e.g. {\"TLAB_TIME_BUDGET_S\": \"45\"}")
    unknown = sorted(str(k) for k in changes if k not in LIVE)
    if unknown:
        raise ValueError(f"not a live setting: {', '.join(unknown)[:200]} (live: {', '.join(LIVE)})")
    values = {}
    for key, value in changes.items():
        if value is None:
            values[key] = _AT_START[key]
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool) and len(str(value)) <= 40:
            values[key] = _checked(key, str(value).strip())
        else:
            raise ValueError(f"{key}: give a short string or a number, or null to restore it")
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    return current()


def _checked(key: str, text: str) -> str:
    """`text` if its reader would take it as said (a reader falls back to its default on a typo, silently)."""
    if key in _SWITCHES:
        if text.lower() not in _SWITCHES[key]:
            raise ValueError(f"{key}: one of {', '.join(_SWITCHES[key])}")
        return text
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if not number >= 0 or number == float("inf"):
        raise ValueError(f"{key}: a number of 0 or more, not {text[:40]!r}")
    if number > UPPER[key]:
        raise ValueError(f"{key}: at most {UPPER[key]:g}, not {text[:40]!r}")
    return text


class LiveSettings:
    """ASGI middleware answering PATH (with the token) and passing everything else on."""

    def __init__(self, app):
        self.app = app
        self.token = os.environ.get(TOKEN_VAR, "").strip()

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or scope.get("path") != PATH:
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return await send_json(send, 403, {"detail": "This needs the token the app was started with."})
        if scope.get("method") == "GET":
            return await send_json(send, 200, current())
        if scope.get("method") != "POST":
            return await send_json(send, 405, {"detail": "GET or POST"})
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                return await send_json(send, 413, {"detail": f"at most {MAX_BODY} bytes"})
            if not message.get("more_body", False):
                break
        try:
            return await send_json(send, 200, apply(json.loads(body or b"{}")))
        except ValueError as exc:  # json's errors are ValueErrors too
            return await send_json(send, 400, {"detail": str(exc)})
        except RecursionError:  # a body nested thousands deep: json gives up on it
            return await send_json(send, 400, {"detail": "send a flat JSON object of settings"})


def middleware() -> list:
    """What launch(app_kwargs={"middleware": ...}) adds: nothing unless enabled()."""
    from starlette.middleware import Middleware

    return [Middleware(LiveSettings)] if enabled() else []
