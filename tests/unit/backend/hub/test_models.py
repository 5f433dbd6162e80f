"""The model hub: resolution per profile, overrides, caching, locking, typed errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from backend.runtime import config
from backend.hub import policy
from backend import hub
from backend.runtime.device import dtype_for, gpu_task, pick_device
from backend.runtime.errors import ModelLoadError


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for role in config.ROLES:
        monkeypatch.delenv(f"TLAB_MODEL_{role.upper()}", raising=False)


@pytest.mark.parametrize("role", config.ROLES)
def test_local_profile_resolves_every_role_to_a_package_or_a_clear_error(role, monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "local")
    spec = config.LOCAL[role]
    if spec is None:
        with pytest.raises(ModelLoadError, match="masked language model"):
            hub.resolve(role)
        return
    r = hub.resolve(role)
    assert r.source == "package" and r.checkpoint == spec.checkpoint and r.method == spec.method
    assert (Path(r.location) / (r.gguf_file or "config.json")).exists()


def test_book_profile_offline_says_what_to_do(monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "book")
    monkeypatch.setattr(policy, "in_hf_cache", lambda repo: False)
    with pytest.raises(ModelLoadError, match="local. profile|pull --profile book"):
        hub.resolve("sentiment")


def test_book_profile_uses_cache_when_present(monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "book")
    gpt = config.BOOK["decoder"].checkpoint
    monkeypatch.setattr(policy, "in_hf_cache", lambda repo: repo == gpt)
    r = hub.resolve("decoder")
    assert (r.checkpoint, r.source, r.location) == (gpt, "cache", gpt)


def test_auto_falls_back_to_local_offline_without_waiting(monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "auto")
    probes = []
    monkeypatch.setattr(policy.socket, "create_connection", lambda *a, **k: probes.append(a) or pytest.fail("probed"))
    r = hub.resolve("encoder")
    assert probes == []  # HF_HUB_OFFLINE: no probe at all, so no wait
    assert r.source == "package" and "unreachable" in r.reason


def test_auto_prefers_cached_book_checkpoint(monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "auto")
    bert = config.BOOK["encoder"].checkpoint
    monkeypatch.setattr(policy, "in_hf_cache", lambda repo: repo == bert)
    assert hub.resolve("encoder").checkpoint == bert
    assert hub.resolve("decoder").source == "package"


def test_hub_probe_is_bounded_and_decided_once(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(policy, "_HUB_STATE", {})
    calls = []

    def slow_connect(*a, **k):
        calls.append(1)
        time.sleep(5)
        raise OSError("no route")

    monkeypatch.setattr(policy.socket, "create_connection", slow_connect)
    start = time.perf_counter()
    assert hub.hub_reachable(timeout_s=0.3) is False
    assert hub.hub_reachable(timeout_s=0.3) is False
    # Bounded: two answers well inside the 5 s one connect would take (its 0.3 s time-out), and one probe.
    assert time.perf_counter() - start < 4.0 and len(calls) == 1


def test_env_override_and_api_override(monkeypatch, tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    monkeypatch.setenv("TLAB_MODEL_SENTIMENT", str(folder))
    r = hub.resolve("sentiment")
    assert r.source == "local-dir" and r.location == str(folder) and r.kind == "seq_cls"
    # the API's override beats the environment's
    monkeypatch.setattr(policy, "in_hf_cache", lambda repo: True)
    r2 = hub.resolve("sentiment", override="someone/model")
    assert (r2.checkpoint, r2.source) == ("someone/model", "cache")


def test_override_errors_are_clear(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        hub.resolve("qa", override=str(tmp_path / "nope"))
    with pytest.raises(ModelLoadError, match="no config.json"):
        hub.resolve("qa", override=str(tmp_path))
    with pytest.raises(ModelLoadError, match="Unknown role"):
        hub.resolve("poetry")


def _tiny_bert_dir(tmp_path):
    from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

    return save_tiny(tiny_bert(), minilm_tokenizer(), tmp_path / "tiny-bert")


def test_hub_returns_the_same_model_and_loads_once_under_8_threads(tmp_path):
    folder = _tiny_bert_dir(tmp_path)
    model_hub = hub.ModelHub()
    results, errors = [], []

    def ask():
        try:
            results.append(model_hub.load("encoder", override=str(folder)))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 8
    assert model_hub.load_count == 1
    assert all(r.model is results[0].model for r in results)
    assert model_hub.load("encoder", override=str(folder)).model is results[0].model
    assert results[0].model.config._attn_implementation == "eager"
    assert results[0].describe()["source"] == "local-dir"


def test_broken_checkpoint_gives_typed_error_and_does_not_poison(tmp_path):
    folder = _tiny_bert_dir(tmp_path)
    weights = folder / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(b"not a safetensors file")
    model_hub = hub.ModelHub()
    with pytest.raises(ModelLoadError, match="Could not load"):
        model_hub.load("encoder", override=str(folder))
    weights.write_bytes(good)  # repaired: the next call loads
    assert model_hub.load("encoder", override=str(folder)).model is not None
    assert model_hub.load_count == 1


def test_wrong_kind_of_model_says_so(tmp_path):
    from tests.helpers.tiny_models import tiny_llama

    out = tmp_path / "llama"
    tiny_llama().save_pretrained(out)
    from tests.helpers.tiny_models import smollm2_tokenizer

    smollm2_tokenizer().save_pretrained(out)
    with pytest.raises(ModelLoadError, match="not a model of the kind"):
        hub.ModelHub().load("ner", override=str(out))  # head would be random
    with pytest.raises(ModelLoadError, match="not a model of the kind"):
        hub.ModelHub().load("summarization", override=str(out))  # no seq2seq llama at all


def test_gpu_task_is_a_noop_off_zerogpu(monkeypatch):
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)

    def f(x):
        return x + 1

    assert gpu_task(f) is f and gpu_task(duration=5)(f) is f


def test_cli_list_prints_every_role(capsys, monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "local")
    from backend.hub import cli

    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for role in config.ROLES:
        assert role in out
    assert "package" in out
    assert "fine-tuned" in out  # offline sentiment: MiniLM fine-tuned here on the shipped set


def test_device_choice_follows_cuda_and_its_precision(monkeypatch):
    """CUDA when there is one (bf16, fp16 where bf16 is unsupported); fp32 on CPU; TLAB_DEVICE wins."""
    import torch

    monkeypatch.delenv("TLAB_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device() == "cpu" and dtype_for("cpu") is torch.float32
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device() == "cuda"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert dtype_for("cuda") is torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert dtype_for("cuda") is torch.float16
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    assert pick_device() == "cpu"


# ------------------------------------------------------------------ public mode and overrides


@pytest.fixture
def public(monkeypatch):
    monkeypatch.setenv("TLAB_PUBLIC", "1")
    monkeypatch.delenv("TLAB_MODEL_DIRS", raising=False)
    return monkeypatch


def test_public_mode_refuses_paths_and_unlisted_ids_with_one_message(public, tmp_path):
    folder = _tiny_bert_dir(tmp_path)
    messages = set()
    for value in ("/etc", "~", "/usr/lib", "/nonexistent/dir", str(folder), "someone/some-model", "../..",
                  str(tmp_path / "missing")):
        with pytest.raises(ModelLoadError) as err:
            hub.resolve("encoder", override=value)
        messages.add(str(err.value))
    assert len(messages) == 1
    (message,) = messages
    assert "not available on this public app" in message and "/etc" not in message


def test_public_mode_allows_model_dirs_and_the_allowlist(public, tmp_path, monkeypatch):
    folder = _tiny_bert_dir(tmp_path)
    public.setenv("TLAB_MODEL_DIRS", str(tmp_path))
    assert hub.resolve("encoder", override=str(folder)).source == "local-dir"
    with pytest.raises(ModelLoadError, match="not available on this public app"):
        hub.resolve("encoder", override=str(tmp_path / ".." / "elsewhere"))
    # An allowlisted Hub id passes the public check (here it then fails as uncached and offline).
    with pytest.raises(ModelLoadError, match="cannot be reached"):
        hub.resolve("encoder", override=config.OVERRIDE_ALLOWLIST[0])


def test_public_mode_defaults(monkeypatch):
    monkeypatch.delenv("TLAB_PUBLIC", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert config.public_mode() is False
    monkeypatch.setenv("SPACE_ID", "someone/lab")
    assert config.public_mode() is True
    monkeypatch.setenv("TLAB_PUBLIC", "0")
    assert config.public_mode() is False


def test_operator_overrides_are_trusted_in_public_mode(public, tmp_path):
    folder = _tiny_bert_dir(tmp_path)
    public.setenv("TLAB_MODEL_ENCODER", str(folder))
    assert hub.resolve("encoder").source == "local-dir"


def test_model_box_length_and_type_are_checked_before_the_file_system():
    with pytest.raises(ModelLoadError, match="at most 200 characters"):
        hub.resolve("encoder", override="x" * 1_000_000)
    with pytest.raises(ModelLoadError, match="must be text"):
        hub.resolve("encoder", override={"a": 1})
    with pytest.raises(ModelLoadError, match="NUL"):
        hub.resolve("encoder", override="a\x00b")


def test_override_models_are_evicted_least_recently_used(tmp_path, monkeypatch):
    monkeypatch.delenv("TLAB_PUBLIC", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert

    folders = [save_tiny(tiny_bert(seed=i), minilm_tokenizer(), tmp_path / f"m{i}") for i in range(3)]
    model_hub = hub.ModelHub()
    first = model_hub.load("encoder", override=str(folders[0]))
    model_hub.load("encoder", override=str(folders[1]))
    model_hub.load("encoder", override=str(folders[0]))  # 0 is now the most recent
    model_hub.load("encoder", override=str(folders[2]))  # evicts 1
    assert model_hub.resident_overrides() == 2
    loads = model_hub.load_count
    model_hub.load("encoder", override=str(folders[0]))
    assert model_hub.load_count == loads  # still resident
    model_hub.load("encoder", override=str(folders[1]))
    assert model_hub.load_count == loads + 1  # was evicted, loaded again
    assert first.model is not None  # a caller holding an evicted model keeps it
