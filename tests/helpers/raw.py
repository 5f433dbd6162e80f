"""Raw calls to the app's HTTP API, for what gradio_client cannot send: NaN and infinity
(its JSON encoder refuses them) and lone surrogates (it encodes to UTF-8 first). JSON escapes
carry both (`NaN`, `"\\ud800"`), and a hostile caller is not bound to a client."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

from tests.helpers.app import ROOT


DOOR_TITLE = "Refused at the door"  # components/shell/gradio_patches.DOOR_TITLE

# What a readable message never contains: an exception class, a traceback, Gradio internals.
UNREADABLE = re.compile(r"Traceback|preprocess|\b[A-Z]\w*(Error|Exception)\b|object has no attribute|"
                        r"<class |validation error for|NoneType|not supported between")


def call(url: str, api_name: str, data: list, session_hash: str | None = None,
         timeout: float = 300, door: bool = False) -> tuple[str, object]:
    """POST /gradio_api/call/<api_name> and read its event stream -> ("complete", outputs)
    or ("error", message). A request the door refuses as it joins the queue (its contract: out of range,
    over a budget; the lanes' rules) is answered at once with Gradio's validation answer: ("error", its
    message), or ("refused at the door", its message) with `door`. The door's own refusals (the contract) come as
    a failed event at once, titled DOOR_TITLE; the lanes' rules answer as Gradio's validation error (HTTP 422)."""
    body = {"data": data}
    if session_hash:
        body["session_hash"] = session_hash
    raw = json.dumps(body, allow_nan=True, ensure_ascii=True).encode()
    name = api_name.strip("/")
    req = urllib.request.Request(f"{url}gradio_api/call/{name}", data=raw,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            event_id = json.loads(resp.read())["event_id"]
    except urllib.error.HTTPError as exc:
        refused = door_message(exc)
        if refused is None:
            raise
        return ("refused at the door" if door else "error"), refused
    with urllib.request.urlopen(f"{url}gradio_api/call/{name}/{event_id}", timeout=timeout) as resp:
        event, value = read_stream(resp.read().decode("utf-8", "replace"))
    if event == "error":
        message = value.get("error") if isinstance(value, dict) else value
        at_door = door and isinstance(value, dict) and value.get("title") == DOOR_TITLE
        return ("refused at the door" if at_door else "error"), str(message)
    return event or "?", value


def read_stream(text: str) -> tuple[str | None, object]:
    """An event stream of /gradio_api/call/<api>/<id> -> (its last event, its last data, parsed)."""
    event, payload = None, None
    for line in text.splitlines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            payload = line[5:].strip()
    return event, json.loads(payload) if payload not in (None, "", "null") else None


def door_message(exc: urllib.error.HTTPError) -> str | None:
    """The message of Gradio's validation answer (the door's refusal), or None for any other HTTP error."""
    body = exc.read().decode("utf-8", "replace")
    try:
        detail = json.loads(body)["detail"]
        return detail[0]["message"] if isinstance(detail, list) and detail[0].get("__type__") == "validate" else None
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None


N_UPLOAD = 300  # sentences in the soak's NER upload


def upload_sentences(url: str, n: int = N_UPLOAD) -> dict:
    """The shipped set's first `n` sentences as an NER upload, as gradio_client's handle_file sends it."""
    rows = (ROOT / "assets/data/ner/train.jsonl").read_bytes().splitlines()[:n]
    body = (b'--B\r\nContent-Disposition: form-data; name="files"; filename="ner.jsonl"\r\n'
            b"Content-Type: application/json\r\n\r\n" + b"\n".join(rows) + b"\n\r\n--B--\r\n")
    req = urllib.request.Request(url + "gradio_api/upload", data=body, method="POST",
                                 headers={"Content-Type": "multipart/form-data; boundary=B"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        path = json.loads(resp.read())[0]
    return {"path": path, "orig_name": "ner.jsonl", "meta": {"_type": "gradio.FileData"}}

