"""Every handler the page exposes, private ones included, answers a stranger's values readably.

Any event can be called through the queue by its `fn_index` with any values, not only the named
API endpoints. Before components.shell.guard, 53 of the 149 handlers answered junk with Python or
Gradio internals ("'dict' object has no attribute 'strip'", "Could not preprocess input
component at index 0 ... Original error: ...")."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

from tests.helpers.raw import UNREADABLE, door_message

JUNK = ({"a": [1]}, 12345, "x" * 5)


def _join(url: str, fn_index: int, data: list, session: str) -> dict | None:
    """POST /gradio_api/queue/join and read the session's event stream to this event's end."""
    body = json.dumps({"data": data, "fn_index": fn_index, "session_hash": session,
                       "event_data": None, "trigger_id": None}).encode()
    req = urllib.request.Request(url + "gradio_api/queue/join", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            event_id = json.loads(resp.read())["event_id"]
    except urllib.error.HTTPError as exc:  # refused as it joined the queue (its contract): that answer is read
        refused = door_message(exc)
        if refused is None:
            raise
        return {"msg": "process_completed", "success": False, "output": {"error": refused}}
    with urllib.request.urlopen(url + f"gradio_api/queue/data?session_hash={session}", timeout=300) as resp:
        for raw in resp:
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith("data:"):
                msg = json.loads(line[5:])
                if msg.get("msg") == "unexpected_error" or (
                        msg.get("msg") == "process_completed" and msg.get("event_id") == event_id):
                    return msg
    return None


def _problem(app_url: str, i: int, dep: dict, junk) -> str | None:
    """What is wrong with handler i's answer to `junk` (None: nothing)."""
    msg = _join(app_url, dep.get("id", i), [junk] * len(dep.get("inputs", [])), uuid.uuid4().hex)
    if msg is None:
        return None
    output = msg.get("output") or {}
    if msg.get("msg") == "unexpected_error" or msg.get("success") is False or output.get("error"):
        text = str(output.get("error") or msg.get("message") or "")
        if not text or UNREADABLE.search(text) or "/work/" in text or "object at 0x" in text:
            return f"fn_index {i} ({dep.get('api_name')}): {text[:160]!r}"
    return None


def test_every_fn_index_answers_junk_readably(app_url):
    config = json.loads(urllib.request.urlopen(app_url + "config", timeout=60).read())
    deps = config["dependencies"]
    assert len(deps) > 100  # the whole page, not a handful of named endpoints
    calls = [(i, dep, junk) for i, dep in enumerate(deps) if dep.get("backend_fn", True)  # else: browser only
             for junk in JUNK]
    # Four strangers at a time, each its own session: most answers are a quick refusal, and one at a
    # time the run was mostly the queue's round trips (~900 calls).
    with ThreadPoolExecutor(4) as pool:
        problems = [p for p in pool.map(lambda c: _problem(app_url, *c), calls) if p]
    assert problems == [], "\n".join(problems)


def test_missing_arguments_and_server_paths_are_refused_without_internals(app_url):
    from tests.helpers.raw import call

    for args in ([], ["one text"]):
        event, message = call(app_url, "/classify", args)
        assert event == "error" and "takes 4 values" in message and "object at 0x" not in message, message
    for path in ("/etc", "nonexistent/thing.csv"):
        file = {"path": path, "meta": {"_type": "gradio.FileData"}}
        event, message = call(app_url, "/train", ["upload", file, "", "", ["probe"], 1, 16, 5, 1e-4, 8, False, False, 0],
                              session_hash=uuid.uuid4().hex)
        assert event == "error" and "uploaded to this app" in message, message
        assert "/work" not in message and path not in message and not UNREADABLE.search(message), message
