"""While the app streams from a generation server on this machine, its own torch work runs one thread
per job: an OpenMP team waiting for cores the server holds stalls at every barrier (measured: /classify
1.1 s beside one server decode with 2 threads, about 0.2 s with 1). A remote server changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.engines.server import generation as remote
from backend.engines.embedding.batching import Coalescer
from backend.engines.server.client import on_this_machine
from backend.runtime import budget
from tests.helpers.fake_server import FakeServer, script_for


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(budget, "_CORES", 2)
    monkeypatch.setattr(budget, "fair_share", lambda jobs, cores=2: max(1, cores // max(1, jobs)))
    monkeypatch.delenv("TLAB_FAIR_THREADS", raising=False)
    before = torch.get_num_threads()
    budget._thread_state.__dict__.clear()
    yield
    torch.set_num_threads(before)
    budget._thread_state.__dict__.clear()


@pytest.mark.parametrize("url,local", [("http://127.0.0.1:8400", True), ("http://localhost:8000/v1", True),
                                       ("http://[::1]:8000", True), ("https://gpu-box.example:8000", False),
                                       ("http://10.0.0.7:8000", False)])
def test_which_servers_share_this_machines_cores(url, local):
    assert on_this_machine(url) is local


def test_one_thread_per_job_while_a_local_server_generates(two_cores):
    budget.fair_threads()
    assert torch.get_num_threads() == 2  # no job, no server: the cores
    with budget.local_server_generating(True):
        budget.fair_threads()
        assert torch.get_num_threads() == 1
        with budget.local_server_generating(False):  # a remote server counts for nothing
            budget.fair_threads()
            assert torch.get_num_threads() == 1
    budget.fair_threads()
    assert torch.get_num_threads() == 2 and budget._LOCAL_SERVER_STREAMS == 0


def test_a_stream_from_a_local_server_counts_while_it_streams_and_not_after():
    from tests.helpers.tiny_models import smollm2_tokenizer

    tok = smollm2_tokenizer()
    fake = FakeServer(tok)  # on 127.0.0.1: this machine
    fake.script = script_for(tok, " Paris is lovely")
    fake.finish = "stop"
    try:
        remote.forget()
        eng = remote.server(fake.url)
        seen = []
        for _, res in remote.stream(eng, tok, "The capital of France is", {"max_new_tokens": 8}):
            seen.append(budget._LOCAL_SERVER_STREAMS)
        assert seen[0] == 1 and seen[-1] == 0  # counted while tokens arrive; released before the result
        stream = remote.stream(eng, tok, "The capital of France is", {"max_new_tokens": 8})
        next(stream)
        assert budget._LOCAL_SERVER_STREAMS == 1
        stream.close()  # Stop: closing the stream releases it too
        assert budget._LOCAL_SERVER_STREAMS == 0
    finally:
        fake.close()
        remote.forget()


def test_the_batching_worker_takes_its_share_like_a_request(two_cores):
    threads = []

    def run(texts):
        threads.append(torch.get_num_threads())
        return np.zeros((len(texts), 2), dtype=np.float32)

    co = Coalescer(run, max_texts=8, name="test-threads")
    try:
        co.submit(["a"])
        with budget.local_server_generating(True):
            co.submit(["b"])
        co.submit(["c"])
    finally:
        co.close()
    assert threads == [2, 1, 2]
