"""One fresh, offline interpreter for every snippet test of a test session (each checks that a snippet gives the run's numbers).

A snippet must run where a learner runs it: a new Python with the repository off `sys.path` (it may not import
the app), offline. Starting one such interpreter per test module paid torch's and transformers' import and the
packaged models' loads once per module; this runner starts it once (lazily, on the first batch) and each test
module sends its batch of cases to it. Each case still runs in a namespace of its own, in its own working folder,
with the thread count it asks for; a loaded checkpoint is shared between cases (from_pretrained memoised on its
arguments) except for a case that changes its model in place (`changes_model`), which loads its own.

A case: {"name", "python", "take": {name: expression} or None, "cwd": folder or None, "changes_model": bool,
"threads": int or None}. `run(cases)` -> {name: what the case computed} (see `_read_back` in DRIVER)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

MARK = "SNIPPET-RESULT "  # the driver's reply line starts with it (a library may print to stdout too)

DRIVER = textwrap.dedent('''
    import contextlib, io, json, os, sys, traceback
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # a snippet run from a checkout still cannot import the app
    import torch
    import transformers
    loaded, memo = {}, [{}]
    for name in ("AutoTokenizer", "AutoModel", "AutoModelForCausalLM"):
        cls = getattr(transformers, name)
        def once(*args, _load=cls.from_pretrained, _name=name, **kwargs):
            key, held = (_name, repr(args), repr(sorted(kwargs.items()))), memo[0]
            if key not in held:
                held[key] = _load(*args, **kwargs)
            return held[key]
        cls.from_pretrained = once
    THREADS = torch.get_num_threads()

    def read_back(case, ns):
        if case.get("take"):  # what to read back: name -> an expression over the snippet's variables
            return {k: eval(e, ns) for k, e in case["take"].items()}
        if "out" in ns and "prompt_len" in ns:  # generation: each returned row's new tokens and text
            rows = [r[ns["prompt_len"]:].tolist() for r in ns["out"]]
            texts = [ns["tokenizer"].decode(r, skip_special_tokens=True) for r in rows]
            eos = ns["model"].generation_config.eos_token_id
            return {"rows": rows, "texts": texts, "eos": eos if isinstance(eos, list) else [eos]}
        if "cosine" in ns:  # the embedding method: the library part, cosines of texts and descriptions
            return {"cosine": ns["cosine"].tolist(), "descriptions": ns["descriptions"]}
        if "probs" in ns:
            return {"labels": ns["labels"], "probs": ns["probs"].tolist()}
        return {k[4:]: v for k, v in ns.items() if k.startswith("ids_")}

    def run(cases):
        found = {}
        for case in cases:
            ns = {"__name__": "__snippet__"}
            os.chdir(case.get("cwd") or "/")  # a snippet that reads a file the app ships runs from a checkout
            memo[0] = {} if case.get("changes_model") else loaded  # one that changes its model loads its own
            torch.set_num_threads(case.get("threads") or THREADS)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(case["python"], case["name"], "exec"), ns)
                found[case["name"]] = read_back(case, ns)
            finally:
                torch.set_num_threads(THREADS)
        return found

    for line in sys.stdin:
        try:
            reply = {"found": run(json.load(open(line.strip(), encoding="utf-8")))}
        except BaseException:
            reply = {"error": traceback.format_exc()}
        sys.stdout.write("''' + MARK + '''" + json.dumps(reply) + "\\n")
        sys.stdout.flush()
''')


class Runner:
    """The interpreter, started on the first `run` and closed by `close` (the session fixture's end)."""

    def __init__(self, folder: Path, timeout_s: float = 600.0):
        self.folder, self.timeout_s, self.proc, self.calls = Path(folder), timeout_s, None, 0
        self.stderr_path = self.folder / "snippet-runner.stderr"

    def _start(self) -> None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        self._stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen([sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, text=True, env=env, cwd="/")  # not the repository

    def run(self, cases: list[dict]) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.calls += 1
        path = self.folder / f"cases-{self.calls}.json"
        path.write_text(json.dumps(cases), encoding="utf-8")
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        watchdog = threading.Timer(self.timeout_s, self.proc.kill)  # a hung snippet ends the wait, not the suite
        watchdog.start()
        try:
            for line in self.proc.stdout:  # a library may print lines of its own before the reply
                if line.startswith(MARK):
                    reply = json.loads(line[len(MARK):])
                    assert "error" not in reply, reply.get("error", "")[-3000:]
                    return reply["found"]
        finally:
            watchdog.cancel()
        raise AssertionError(f"the snippet interpreter ended (killed after {self.timeout_s:.0f} s?):\n"
                             f"{self.stderr_path.read_text()[-3000:]}")

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self._stderr.close()


def runner_in_temp():
    """A Runner over a temporary folder (for the fixture; the folder goes with the runner)."""
    return Runner(Path(tempfile.mkdtemp(prefix="snippets-")))
