"""The From scratch tab's tiny GPT: real transformers GPT-2 models trained for a few steps."""

from __future__ import annotations

import zipfile

import pytest
import torch

from backend import scratch
from backend.engines.scratch import tiny_gpt
from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.scratch import gpt_store

TEXT = "the cat sat on the mat. the dog sat on the log. " * 60
TINY = dict(corpus="paste", text=TEXT, layers=1, heads=2, width=32, context=16, batch=8, eval_every=5)


@pytest.fixture(autouse=True)
def fresh_store():
    gpt_store.STORE.set(None)
    yield
    gpt_store.STORE.set(None)


def test_the_loss_falls_on_a_repetitive_text_and_ends_below_the_unigram_entropy():
    r = scratch.train_gpt("a", steps=40, learning_rate=5e-3, **TINY)
    assert r["steps_run"] == 40 and r["stopped"] is None and len(r["losses"]) == 40
    assert sum(r["losses"][-5:]) / 5 < r["losses"][0] - 1.0, r["losses"]
    vals = [e["val_loss"] for e in r["evals"]]
    assert [e["step"] for e in r["evals"]] == [0, 5, 10, 15, 20, 25, 30, 35, 40]
    assert vals[-1] < vals[0] and vals[-1] < r["unigram_entropy"], (vals, r["unigram_entropy"])
    assert r["final"]["val_loss"] == vals[-1] and r["final"]["train_loss"] == r["losses"][-1]
    assert r["parameters"] == scratch.plan_gpt("bytes", 0, 40, 1, 2, 32, 16)["parameters"]  # the plan counts right
    after = scratch.plan_gpt("bytes", 0, 40, 1, 2, 32, 16, batch=8, eval_every=5)
    assert after["measured"] and after["basis"] == "measured in this process"  # this shape's rate is now known
    assert r["tokens_per_s"] > 0 and r["samples"][0]["step"] == 0 and isinstance(r["samples"][-1]["text"], str)


def test_a_seed_gives_the_same_run_and_another_seed_another():
    one = scratch.train_gpt("a", steps=8, seed=3, **TINY)
    two = scratch.train_gpt("b", steps=8, seed=3, **TINY)
    other = scratch.train_gpt("c", steps=8, seed=4, **TINY)
    assert one["losses"] == two["losses"] and one["samples"] == two["samples"]
    assert one["losses"] != other["losses"]


def test_the_plan_refuses_a_run_that_cannot_fit_the_budget_before_training(monkeypatch):
    from backend.runtime.rates import RATES

    monkeypatch.setattr(RATES, "per_s", lambda key: 4.0)  # 4 steps (and evaluations) a second, measured
    monkeypatch.setattr(budget, "default_seconds", lambda: 30.0)
    plan = scratch.plan_gpt(steps=5000)
    assert not plan["fits"] and plan["measured"] and 0 < plan["max_steps"] < 5000
    with pytest.raises(InputError, match=rf"does not fit one request.*at most {plan['max_steps']:,} steps"):
        next(scratch.train_gpt_iter("a", steps=5000))
    assert gpt_store.get_store().peek("a") is None  # refused before the session was even made
    assert scratch.plan_gpt(steps=plan["max_steps"])["fits"]
    assert not scratch.plan_gpt(steps=plan["max_steps"] + 1)["fits"]
    monkeypatch.setattr(budget, "default_seconds", lambda: 0.0)  # no limit: anything within the sliders fits
    assert scratch.plan_gpt(steps=5000, layers=6, width=256, heads=8)["fits"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(width=30, heads=4), "multiple of heads"),
    (dict(steps=0), "steps must be between 1 and 5000"),
    (dict(scheme="words"), "tokens must be one of"),
    (dict(corpus="paste", text="tiny text", context=64), "too short"),
])
def test_bad_settings_are_refused_readably(kwargs, message):
    with pytest.raises(InputError, match=message):
        scratch.train_gpt("a", **{**dict(steps=2), **kwargs})
    assert gpt_store.get_store().peek("a") is None or not gpt_store.get_store().peek("a").running


def test_stop_keeps_the_partial_model_and_says_how_many_steps_ran():
    events = []
    for ev in scratch.train_gpt_iter("s", steps=200, **TINY):
        events.append(ev)
        if ev["event"] == "step" and ev["step"] >= 6:
            assert scratch.stop_gpt("s") == {"stopping": True, "ended": False}  # still running: no wait asked
    r = events[-1]["result"]
    assert r["stopped"] == "stopped" and 6 <= r["steps_run"] < 200 and len(r["losses"]) == r["steps_run"]
    # No validation pass after Stop: the final numbers say which step they come from.
    assert r["evals"][-1]["step"] < r["steps_run"] and r["final"]["val_step"] == r["evals"][-1]["step"]
    kept = gpt_store.get_store().trained("s")
    assert kept.info["steps_run"] == r["steps_run"] and not gpt_store.get_store().peek("s").running
    assert scratch.stop_gpt("s") == {"stopping": False, "ended": False}


def test_a_stop_that_waits_says_when_the_run_has_ended_so_the_page_keeps_its_final_status():
    """Stop now ends a run within a step, often before Stop's own answer reaches the page, where its
    "Stopping..." covered the run's final status (a browser test saw it stay 60 s). Asked to wait, Stop
    says the run has ended, and the tab's Stop writes nothing over the final status."""
    import threading

    from components.shell.session import stop_said

    said = []
    for ev in scratch.train_gpt_iter("w", steps=200, **TINY):
        if ev["event"] == "step" and ev["step"] >= 6 and not said:
            answer = []
            t = threading.Thread(target=lambda: answer.append(stop_said(scratch.stop_gpt, "w", "Stopping...")))
            t.start()
            said.append(answer)
    t.join(timeout=10)
    assert said and said[0] and said[0][0] is not None and not isinstance(said[0][0], str)  # gr.skip(): nothing written
    assert stop_said(scratch.stop_gpt, "w", "Stopping...") == "*Nothing is training in this session.*"


def test_closing_the_stream_early_still_keeps_the_steps_that_ran():
    gen = scratch.train_gpt_iter("c", steps=200, **TINY)
    for ev in gen:
        if ev["event"] == "step":
            break
    gen.close()
    assert gpt_store.get_store().trained("c").info["steps_run"] == ev["step"]


def test_no_model_yet_is_said_readably():
    with pytest.raises(InputError, match="No tiny GPT in this session yet"):
        scratch.export_gpt("nobody")


def _loaded(zpath, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with zipfile.ZipFile(zpath) as z:
        z.extractall(tmp_path)
        stem = z.namelist()[0].split("/")[0]
    folder = tmp_path / stem
    return AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder), folder


@pytest.mark.parametrize("scheme", ["bytes", "bpe"])
def test_the_zip_loads_back_with_transformers_and_generates_the_same_tokens(scheme, tmp_path):
    scratch.train_gpt("z", steps=10, scheme=scheme, vocab_size=120, **TINY)
    out = scratch.export_gpt("z", root=str(tmp_path / "files"))
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= set(out["files"])
    model, tok, folder = _loaded(out["path"], tmp_path)
    assert "tiny GPT trained from scratch" in (folder / "README.md").read_text()
    prompt = "the cat"
    ours = scratch.generate_gpt("z", prompt, max_new_tokens=8, temperature=0)  # within the context of 16
    ids = tok(prompt, return_tensors="pt").input_ids
    assert ids[0].tolist() == ours["prompt_ids"]  # the saved tokenizer encodes as the session's did
    theirs = model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)[0, ids.shape[1]:].tolist()
    assert theirs == ours["ids"]
    if scheme == "bytes":
        assert ours["prompt_ids"] == list(prompt.encode()) and tok.decode(list("héllo".encode())) == "héllo"


def test_the_byte_tokenizer_is_the_bytes():
    tok = tiny_gpt.byte_tokenizer()
    text = "Ünïcode: 日本 ok\nnext line"
    ids = tiny_gpt.encode(tok, text)
    assert ids.tolist() == list(text.encode("utf-8")) and tok.decode(ids.tolist()) == text
    assert tok.get_vocab_size() == 256


def test_the_unigram_entropy_is_the_entropy_of_the_token_frequencies():
    assert tiny_gpt.unigram_entropy(torch.tensor([1, 1, 2, 2])) == pytest.approx(torch.log(torch.tensor(2.0)).item())


def test_under_zerogpu_every_forward_runs_inside_a_gpu_task_and_the_state_crosses_pickle(tmp_path):
    """With the fake `spaces` (a forward outside spaces.GPU raises; arguments and results must
    pickle), a tiny run, a stop-free finish, a generation and the download all work."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (
        "from backend import scratch\n"
        f"r = scratch.train_gpt('z', corpus='paste', text={TEXT!r}, steps=6, layers=1, heads=2, width=32, "
        "context=16, batch=4, eval_every=3)\n"
        "assert r['steps_run'] == 6 and len(r['evals']) == 3, r\n"
        "g = scratch.generate_gpt('z', 'the cat', max_new_tokens=4)\n"
        f"e = scratch.export_gpt('z', root={str(tmp_path)!r})\n"
        "print('OK', g['ids'], e['files'])\n")
    log = tmp_path / "spaces.jsonl"
    env = {**os.environ, "SPACES_ZERO_GPU": "1", "FAKE_SPACES_LOG": str(log), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(root / "tests" / "fake_spaces"), str(root)])}
    done = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "OK" in done.stdout, done.stderr[-3000:]
    events = log.read_text()
    assert '"event": "call"' in events and "train_chunk" in events and '"outside"' not in events
