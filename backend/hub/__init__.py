"""The model hub: resolve a role to a checkpoint, load it once, share it, say where it came from.

Tabs call `hub.load(role, override)` inside their GPU-wrapped entry points and get a
`LoadedModel`; `hub.tokenizer(role)` loads only a tokenizer. Policy (which checkpoint) is in
`policy`, loading and caching in `loader`, the GGUF cache in `conversion`, the models the
project trains itself in `builders`; `python -m backend.hub list|pull` is the CLI.
"""

from backend.hub.loader import HUB, LoadedModel, ModelHub, get_hub, load
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


def tokenizer(role: str, override: str | None = None):
    """(tokenizer, Resolved) of a role's checkpoint, without loading its weights."""
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
