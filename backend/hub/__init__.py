"""The model hub: resolve a role to a checkpoint, load it once, share it, say where it came from.

Tabs call `hub.load(role, override)` inside their GPU-wrapped entry points and get a
`LoadedModel`; `hub.tokenizer(role)` loads only a tokenizer. Policy (which checkpoint) is in
`policy`, loading and caching in `loader`, the GGUF cache in `conversion`, the models the
project trains itself in `builders`; `python -m backend.hub list|pull|build` is the CLI.
"""

from backend.hub.policy import (
    PUBLIC_REFUSAL,
    Resolved,
    check_override_text,
    check_public_override,
    hub_reachable,
    in_hf_cache,
    package_dir,
    resolve,
)

_LOADER = ("HUB", "LoadedModel", "ModelHub", "get_hub", "load")  # loader.py imports torch: read on first use


def __getattr__(name: str):
    """The loader's names, imported when first asked for, so `python -m backend.hub build` can say "up to
    date" without importing torch."""
    if name in _LOADER:
        from backend.hub import loader

        value = getattr(loader, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tokenizer(role: str, override: str | None = None):
    """(tokenizer, Resolved) of a role's checkpoint, without loading its weights."""
    get_hub = globals().get("get_hub") or __getattr__("get_hub")
    return get_hub().tokenizer(role, override)


__all__ = [
    "HUB",
    "PUBLIC_REFUSAL",
    "LoadedModel",
    "ModelHub",
    "Resolved",
    "check_override_text",
    "check_public_override",
    "get_hub",
    "hub_reachable",
    "in_hf_cache",
    "load",
    "package_dir",
    "resolve",
    "tokenizer",
]
