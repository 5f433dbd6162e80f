"""A fake OpenAI-compatible generation server (scripted replies, real HTTP on loopback) for the server-client tests."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

from backend.engines.server import generation as remote
from backend.engines.tasks import instruct


MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


class FakeServer:
    """A vLLM look-alike. `script`: per step (chosen id, its log-prob, {id: log-prob} of the top
    candidates); `finish`: the last chunk's finish_reason; `mode`: ok | refuse | slow_health |
    slow_answer | die_mid | other_tokenizer | no_ids | trickle."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.requests: list[dict] = []
        self.script: list[tuple[int, float, dict[int, float]]] = []
        self.finish = "length"
        self.mode = "ok"
        self.health_calls = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/health":
                    fake.health_calls += 1
                    if fake.mode == "slow_health":
                        time.sleep(1.5)
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/v1/models":
                    self._json(200, {"object": "list", "data": [
                        {"id": MODEL, "object": "model", "owned_by": "vllm", "max_model_len": 2048}]})
                else:
                    self._json(404, {"error": "no such route"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/tokenize":
                    ids = fake.tokenizer(body["prompt"], add_special_tokens=False)["input_ids"]
                    if fake.mode == "other_tokenizer":
                        ids = [i + 1 for i in ids]
                    self._json(200, {"count": len(ids), "tokens": ids})
                    return
                fake.requests.append(body)
                if fake.mode == "refuse":
                    self._json(400, {"error": {"message": "This model's maximum context length is 2048 tokens"}})
                    return
                if fake.mode == "slow_answer":
                    time.sleep(1.5)
                try:
                    self._stream(body)
                except (BrokenPipeError, ConnectionResetError):  # the client closed it: Stop, budget
                    pass

            def _stream(self, body):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for n in range(body.get("n", 1)):
                    for i, (cid, lp, top) in enumerate(fake.script):
                        if fake.mode == "die_mid" and i == 2:
                            self.wfile.flush()
                            self.connection.close()  # the server died: the stream ends without [DONE]
                            return
                        if fake.mode == "trickle":
                            time.sleep(0.3)
                        tok = (lambda t: f"token_id:{t}") if fake.mode != "no_ids" else (lambda t: f"tok{t}")
                        last = i == len(fake.script) - 1
                        choice = {"index": n, "text": fake.tokenizer.decode([cid]), "finish_reason":
                                  fake.finish if last else None,
                                  "logprobs": {"tokens": [tok(cid)], "token_logprobs": [lp], "text_offset": [0],
                                               "top_logprobs": [{tok(k): v for k, v in top.items()}]}}
                        self.wfile.write(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
                        self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def script_for(tokenizer, text: str, eos: bool = True) -> list:
    """Steps whose chosen token is each token of `text` (then EOS): chosen log-prob -0.1, two
    runners-up below it, so every chosen token has rank 1."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"] + ([tokenizer.eos_token_id] if eos else [])
    return [(t, -0.1, {t: -0.1, 100 + i: -2.5, 200 + i: -3.0}) for i, t in enumerate(ids)]


def serving_fake(tok, monkeypatch):
    """The fake server answering " Paris is lovely" + EOS, as the app's TLAB_GENERATION_URL (0.5 s
    time-outs); a generator for the tiers' `fake` fixtures: yields it, then closes it."""
    f = FakeServer(tok)
    f.script = script_for(tok, " Paris is lovely")
    f.finish = "stop"
    monkeypatch.setenv("TLAB_GENERATION_URL", f.url)
    monkeypatch.setenv("TLAB_GENERATION_TIMEOUT_S", "0.5")
    remote.forget()
    yield f
    f.close()
    remote.forget()


def closed_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens once the socket closes


TEXT = ("The Eiffel Tower is 330 metres tall. It was the tallest man-made structure in the world for 41 years. "
        "A broadcasting aerial was added at the top in 1957.")


def no_weights_here(monkeypatch, reply: dict | None = None) -> list:
    """In-process fallbacks record their calls instead of loading SmolLM2's weights."""
    calls = []
    from backend.pipelines import api

    def load(task, override, progress):
        if task not in ("ner", "embedder"):  # the summary checks' encoders (summary_checks), not the decoder
            calls.append(task)
        return SimpleNamespace(model=None, tokenizer=None, method="instruct-fallback", checkpoint="here",
                               describe=lambda: {"checkpoint": "here", "method": "instruct-fallback"}), []

    monkeypatch.setattr(api, "_load", load)
    monkeypatch.setattr(instruct, "chat_generate", lambda *a, **k: dict(reply or {
        "text": "In-process reply.", "prompt_tokens": 9, "new_tokens": 3, "mean_logprob": -1.0,
        "finish_reason": "eos", "warnings": []}))
    return calls
