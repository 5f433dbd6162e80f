"""The per-request time budget: every long loop stops at its deadline or on a cancel.

Tiny random models; a budget of 0.0001 s (or a cancelled one) must stop each loop at its next
check with a readable message (embedding, QA windows, index builds), or end generation with
the text so far and finish_reason "time budget" / "stopped".
"""

from __future__ import annotations

import os
import re
import threading
import time

import numpy as np
import pytest

from backend.runtime.rates import Rates

from backend.runtime import budget
from backend.hub import loader
from backend.engines.generation import generate
from backend.engines.generation.settings import MAX_COMPARE_WORK, parse_strategies
from backend.engines.embedding.vectors import embed_texts
from backend.runtime.errors import InputError, LabError
from backend.search import chunked_build as bounds
from backend.search.corpora import Corpus, Passage
from tests.helpers import tiny_models as T

PROMPT = "Transformers are the"


@pytest.fixture(scope="module")
def llama():
    return T.tiny_llama(), T.smollm2_tokenizer()


@pytest.fixture(scope="module")
def bert():
    return T.tiny_bert(), T.minilm_tokenizer()


def spent() -> budget.Budget:
    b = budget.Budget(1e-4)
    time.sleep(0.002)
    return b


# ------------------------------------------------------------------ the object


def test_budget_checks_deadline_and_stop_flag():
    b = budget.Budget(60)
    b.check("nothing")  # in time: no error
    assert not b.expired() and b.finish_reason is None and 59 < b.remaining() <= 60
    b.cancel()
    with pytest.raises(budget.Cancelled, match="cancelled"):
        b.check()
    assert b.finish_reason == "stopped"
    late = spent()
    with pytest.raises(budget.BudgetExceeded) as err:
        late.check("embedded 5 of 9 texts", "Embed fewer texts.")
    msg = str(err.value)
    assert "time budget of 0.0001 s" in msg and "embedded 5 of 9 texts" in msg and "Embed fewer texts." in msg
    assert isinstance(err.value, LabError) and late.finish_reason == "time budget"


def test_zero_seconds_means_no_limit_and_env_sets_the_default(monkeypatch):
    assert not budget.Budget(0).expired()
    monkeypatch.setenv("TLAB_TIME_BUDGET_S", "7.5")
    assert budget.Budget().seconds == 7.5


def test_scope_is_shared_by_nested_scopes_and_closed_after():
    assert budget.current() is None
    budget.check()  # no budget open: nothing to check
    with budget.scope(30) as outer:
        assert budget.current() is outer and budget.active_jobs() >= 1
        with budget.scope(5) as inner:
            assert inner is outer  # an entry point inside a request adds no second deadline
    assert budget.current() is None


def test_restart_counts_the_work_not_the_wait():
    b = spent()
    b.seconds = 60
    b.restart()
    assert not b.expired()


def test_fair_share_splits_the_cores():
    assert budget.fair_share(1, cores=2) == 2
    assert budget.fair_share(2, cores=2) == 1
    assert budget.fair_share(3, cores=2) == 1
    assert budget.fair_share(0, cores=8) == 8


def test_the_cores_are_the_operators_omp_num_threads_else_the_cpus_this_process_may_use(monkeypatch):
    """`fair_threads` sets torch's team size itself, so an OMP_NUM_THREADS=1 (two test lanes on two cores,
    a shared host) was set back to every core; and a container's cpuset is smaller than the machine."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert budget._cores() == 1
    for junk in ("", "0", "two", "-3"):
        monkeypatch.setenv("OMP_NUM_THREADS", junk)
        assert budget._cores() == len(os.sched_getaffinity(0))
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert budget._cores() == len(os.sched_getaffinity(0))
    pinned = sorted(os.sched_getaffinity(0))[:1]
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, pinned)
    try:
        assert budget._cores() == 1
    finally:
        os.sched_setaffinity(0, before)


# ------------------------------------------------------------------ generation


def test_generation_stops_at_the_deadline_with_the_text_so_far(llama):
    model, tok = llama
    with budget.scope(budget=spent()):
        res = generate.decode(model, tok, PROMPT, {"strategy": "greedy", "max_new_tokens": 40})
    assert res.finish_reason == "time budget" and res.n_new_tokens == 1
    assert any("time budget" in w for w in res.warnings)
    again = generate.decode(model, tok, PROMPT, {"strategy": "greedy", "max_new_tokens": 5})
    assert again.finish_reason == "length" and again.n_new_tokens == 5


def test_beam_search_stops_at_the_deadline(llama):
    model, tok = llama
    with budget.scope(budget=spent()):
        res = generate.decode(model, tok, PROMPT, {"strategy": "beam", "num_beams": 4, "max_new_tokens": 40})
    assert res.finish_reason == "time budget" and res.n_new_tokens < 40


def test_a_cancel_stops_a_streamed_decode(llama):
    model, tok = llama
    b = budget.Budget(60)
    with budget.scope(budget=b):
        stream = generate.decode_stream(model, tok, PROMPT, {"strategy": "greedy", "max_new_tokens": 200})
        text, res = next(stream)
        b.cancel()
        for text, res in stream:
            pass
    assert res is not None and res.finish_reason == "stopped" and res.n_new_tokens < 200


def test_compare_refuses_too_much_work():
    ok = [{"strategy": "greedy", "max_new_tokens": 64}, {"strategy": "beam", "num_beams": 4, "max_new_tokens": 64}]
    assert len(parse_strategies(ok)) == 2
    heavy = [{"strategy": "beam", "num_beams": 16, "max_new_tokens": 512}] * 4
    with pytest.raises(InputError) as err:
        parse_strategies(heavy)
    assert "32,768 token-steps" in str(err.value) and f"{MAX_COMPARE_WORK:,}" in str(err.value)


def test_instruct_and_seq2seq_generation_stop_at_the_deadline(llama):
    from transformers import BartConfig, BartForConditionalGeneration

    from backend.engines.tasks.instruct import chat_generate
    from backend.pipelines.seq2seq import seq2seq_generate

    model, tok = llama
    msgs = [{"role": "user", "content": "Say something."}]
    with budget.scope(60) as b:
        out = chat_generate(model, tok, msgs, max_new_tokens=30, min_new_tokens=30)
        assert out["finish_reason"] == "length"
        b.seconds, b.deadline = 1e-4, time.monotonic()
        with pytest.raises(budget.BudgetExceeded):  # the budget is gone before it starts
            chat_generate(model, tok, msgs, max_new_tokens=30)
    eos = tok.eos_token_id
    bart = BartForConditionalGeneration(BartConfig(
        vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=eos, eos_token_id=eos,
        decoder_start_token_id=eos, forced_eos_token_id=None, d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_position_embeddings=128)).eval()
    settings = {"max_new_tokens": 30, "min_new_tokens": 30, "num_beams": 1}
    with budget.scope(60):
        full = seq2seq_generate(bart, tok, "some text to summarise", settings=settings)
    assert full["finish_reason"] == "done" and full["notices"] == []
    with budget.scope(budget=spent()), pytest.raises(budget.BudgetExceeded, match="nothing generated yet"):
        seq2seq_generate(bart, tok, "some text to summarise", settings=settings)


def test_instruct_generation_returns_the_text_so_far(llama, monkeypatch):
    from backend.engines.tasks import instruct

    model, tok = llama
    b = budget.Budget(60)
    calls = {"n": 0}
    real = b.expired

    def expires_after_three_tokens():  # the deadline passes after the third check
        calls["n"] += 1
        if calls["n"] > 3:
            b.deadline = time.monotonic()
        return real()

    monkeypatch.setattr(b, "expired", expires_after_three_tokens)
    with budget.scope(budget=b):
        out = instruct.chat_generate(model, tok, [{"role": "user", "content": "Hi"}], max_new_tokens=40,
                                     min_new_tokens=40)
    assert out["finish_reason"] == "time budget" and out["new_tokens"] == 4


# ------------------------------------------------------------------ embedding, QA, builds


def test_embedding_checks_between_batches(bert):
    model, tok = bert
    texts = [f"text number {i}" for i in range(10)]
    b = budget.Budget(60)
    seen = []

    def progress(done, total):
        seen.append(done)
        if done >= 4:
            b.cancel()

    with budget.scope(budget=b), pytest.raises(budget.Cancelled, match="embedded 4 of 10 texts"):
        embed_texts(texts, model, tok, batch_size=2, progress=progress)
    assert seen == [2, 4]
    with budget.scope(budget=spent()), pytest.raises(budget.BudgetExceeded, match="embedded 0 of 10 texts"):
        embed_texts(texts, model, tok, batch_size=2)


def test_qa_stride_loop_checks_between_windows():
    from transformers import BertConfig, BertForQuestionAnswering

    from backend.engines.qa.extractive_qa import answer_question

    tok = T.minilm_tokenizer()
    model = BertForQuestionAnswering(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1,
                                                num_attention_heads=2, intermediate_size=37)).eval()
    context = " ".join(f"word{i}" for i in range(1500))
    out = answer_question(model, tok, "which word?", context, max_length=64, stride=16)
    assert out["windows"] > 8  # more than one batch of windows
    with budget.scope(budget=spent()), pytest.raises(budget.BudgetExceeded, match=r"read 0 of \d+ windows"):
        answer_question(model, tok, "which word?", context, max_length=64, stride=16)


def _corpus(texts):
    return Corpus("t", [Passage(f"p{i}", t) for i, t in enumerate(texts)], notes=["parsed"])


def test_identical_passages_are_embedded_once_and_said_so():
    corpus, dropped = bounds.dedupe(_corpus(["a b", "c d", "a b", "a b", "e"]))
    assert dropped == 2 and [p.text for p in corpus.passages] == ["a b", "c d", "e"]
    assert [p.title for p in corpus.passages] == ["p0", "p1", "p4"]
    assert corpus.notes == ["parsed", "Dropped 2 identical passage(s): 3 unique passage(s) are indexed "
                                      "(each identical passage is embedded once)."]
    same, none = bounds.dedupe(_corpus(["x", "y"]))
    assert none == 0 and [p.text for p in same.passages] == ["x", "y"]


def test_public_mode_caps_the_passages_per_build(monkeypatch):
    big = _corpus([f"t{i}" for i in range(30)])
    monkeypatch.setenv("TLAB_PUBLIC", "0")
    assert bounds.prepare(big, shared=False) is big  # private mode: the service's own limit applies
    monkeypatch.setenv("TLAB_PUBLIC", "1")
    monkeypatch.setenv("TLAB_PUBLIC_MAX_PASSAGES", "20")
    with pytest.raises(InputError, match="30 passages; this public server indexes at most 20 per build"):
        bounds.prepare(big, shared=False)
    assert bounds.prepare(big, shared=True) is big  # built-in corpora are vetted and shared


def test_embed_in_chunks_estimates_checks_and_refuses_what_cannot_fit(monkeypatch):
    monkeypatch.setattr(bounds, "RATES", Rates())  # nothing measured yet
    monkeypatch.setattr(bounds, "LONG_BUILD", 10)
    told = []

    def fast(chunk):
        time.sleep(0.01)
        return np.ones((len(chunk), 3), dtype=np.float32)

    texts = [f"{i:02d}" for i in range(40)]
    vectors, plan = bounds.embed_in_chunks(texts, fast, 10, say=told.append)
    assert vectors.shape == (40, 3) and plan["passages"] == 40
    assert plan["rate_per_s"] and plan["estimated_s"] is not None and len(told) == 1  # no rate before the first chunk
    assert told[0].startswith("Embedding 40 passages: about")
    told.clear()
    bounds.embed_in_chunks(texts, fast, 10, say=told.append)
    assert len(told) == 2  # the earlier builds' rate first, then this build's own

    def slow(chunk):  # 20 characters/s: the 40 passages of 2 characters take 4 s
        time.sleep(len(chunk) * 2 / 20)
        return np.ones((len(chunk), 3), dtype=np.float32)

    with budget.scope(2.0), pytest.raises(budget.BudgetExceeded) as err:
        bounds.embed_in_chunks(texts, slow, 10)
    msg = str(err.value)
    assert re.search(r"about 4 s at the measured 1\d passages/s", msg), msg  # refused after one chunk of 1 s
    assert re.search(r"About \d+ passages fit", msg)
    b = budget.Budget(60)
    b.cancel()
    with budget.scope(budget=b), pytest.raises(budget.Cancelled, match="embedded 0 of 40 passages"):
        bounds.embed_in_chunks(texts, slow, 10)


def test_fair_threads_gives_each_of_two_jobs_its_share():
    import torch

    before = torch.get_num_threads()
    share = max(1, budget._CORES // 2)
    result = {}
    started, checked = threading.Event(), threading.Event()

    def job():
        with budget.scope(60):
            started.set()
            checked.wait(5)  # both jobs are open now
            budget.check()
            result["threads"] = torch.get_num_threads()

    t = threading.Thread(target=job)
    t.start()
    started.wait(5)
    try:
        with budget.scope(60):
            budget.check()
            mine = torch.get_num_threads()
            checked.set()
            t.join()
        assert result["threads"] == mine == share
        with budget.scope(60):  # alone again: all the cores
            budget.check()
            assert torch.get_num_threads() == budget._CORES
    finally:
        torch.set_num_threads(before)


def test_a_first_model_load_is_not_charged_to_the_requests_budget(monkeypatch):
    """The offline sentiment classifier's one fine-tuning can take a minute inside a request:
    the request's budget restarts after a first load, and a second load changes nothing."""
    from backend import hub
    from tests.helpers.virtual_clock import installed

    clock = installed(monkeypatch, budget)  # the budget's clock, moved only by the fake load and the test

    class SlowHub:
        loaded = False

        def is_loaded(self, role, override=None):
            return self.loaded

        def load(self, role, override=None, progress=None):
            if not self.loaded:
                clock.sleep(0.3)
                self.loaded = True
            return role

    model_hub = SlowHub()
    monkeypatch.setattr(loader, "get_hub", lambda: model_hub)
    with budget.scope(seconds=0.25) as b:
        assert hub.load("sentiment") == "sentiment"
        assert not b.expired() and b.remaining() == pytest.approx(0.25)  # restarted after the 0.3 s load
        clock.sleep(0.1)
        hub.load("sentiment")  # loaded: no restart
        assert b.remaining() == pytest.approx(0.15)


def test_one_order_of_sums_holds_one_thread_through_every_check():
    """Inside the pin a job's checks leave its one thread alone (fair_threads would give a lone job every
    core), and the count it had before comes back after."""
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(budget._CORES)
        with budget.scope(60):
            with budget.one_order_of_sums():
                budget.check()
                assert torch.get_num_threads() == 1
            assert torch.get_num_threads() == budget._CORES
    finally:
        torch.set_num_threads(before)
