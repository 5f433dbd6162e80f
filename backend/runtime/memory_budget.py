"""A memory budget per request: what one generation will hold, estimated from its inputs before any
forward, against the share of memory each request may hold (TLAB_REQUEST_MEMORY_MB, 2,048 MB).

Why: one anonymous `/summarize` (a 20,000-character text, 8 beams, eager attention) grew the app
from 451 MB to 10.5 GB in 24 s, and the kernel ended it at 17.6 GB. Its first forward read the whole
prompt for 8 beams at once: 8 x 9 heads x 4,500^2 attention scores in float32 is 5.8 GB per layer.
The prefill now runs in chunks at batch 1 (`backend.engines.generation.prefill`), so what grows with
the beams is the key/value cache and the logits a run keeps; this module counts those (plain numbers
in, plain numbers out: the model's shape is read by the caller) and refuses, with what to lower,
a run whose estimate is over the share. `Budget` (backend/runtime/budget.py) stops a run whose
measured growth passes GUARD_FACTOR shares anyway: an estimate can be wrong, the server must not.

Estimate, in bytes, for `width` sequences (beams or samples) of `prompt + new` tokens:
- cache: 2 (keys and values) x layers x kv_heads x head_dim x dtype bytes x width x (prompt + new);
  twice for beam search, which reorders the cache every step (old and new copy live together);
- prefill: one chunk's attention scores at batch 1 (eager: scores, softmax and its copy, float32),
  heads x chunk x prompt x 4 x 3;
- steps: each new token's scores over the whole context, width x heads x (prompt + new) x 4 x 3;
- kept logits: width x new x vocab x 4 when the run keeps every step's logits (`keep_logits`);
- an encoder (seq2seq): its attention over the source once, heads x source^2 x 4 x 3, and the
  decoder's cross-attention cache, 2 x layers x heads x head_dim x bytes x width x source.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.runtime.errors import InputError
from backend.runtime import env

PREFILL_CHUNK = 128  # prompt tokens per prefill forward: under a second on 2 cores, so Stop answers within one
SCORE_COPIES = 3  # eager attention holds scores, their softmax and a copy of it at once (float32)
GUARD_FACTOR = 2.0  # measured growth past this many shares stops a run whose estimate was wrong
MB = 2**20


@dataclass(frozen=True)
class Shape:
    """What a generation's memory depends on, read off a model's config (engines/generation/prefill.py)."""

    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    dtype_bytes: int = 4
    encoder_heads: int = 0  # 0: decoder-only


MODELS_MB = 4096.0  # what the app's models and Python hold before any request (1.1-4 GB measured)


def machine_mb() -> float | None:
    """The memory this process may use: its cgroup's limit (a container, a Space) or the machine's."""
    try:
        raw = open("/sys/fs/cgroup/memory.max").read().strip()
        if raw.isdigit():
            return int(raw) / MB
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def share_mb() -> float:
    """The memory one request may hold while it runs: TLAB_REQUEST_MEMORY_MB where the operator set it;
    else 2,048 MB, less on a small machine, so that the models plus two shares for each of the two long
    slots stay under the machine's memory (at least 256 MB)."""
    if env.is_set("TLAB_REQUEST_MEMORY_MB"):
        from backend.runtime.config import get_settings

        return float(get_settings().request_memory_mb)
    total, most = machine_mb(), float(env.var("TLAB_REQUEST_MEMORY_MB").default)
    if total is None:
        return most
    return float(max(256.0, min(most, (total - MODELS_MB) / (2 * GUARD_FACTOR))))


def generation_bytes(shape: Shape, prompt: int, new: int, width: int = 1, beam: bool = False,
                     keep_logits: bool = False, source: int = 0) -> dict:
    """The parts of one generation's memory (bytes) and their `total` (see the module docstring)."""
    tokens = prompt + new
    per_token = 2 * shape.layers * shape.kv_heads * shape.head_dim * shape.dtype_bytes
    parts = {
        "cache": per_token * width * tokens * (2 if beam and width > 1 else 1),
        "prefill": shape.heads * min(prompt, PREFILL_CHUNK) * prompt * 4 * SCORE_COPIES,
        "steps": width * shape.heads * tokens * 4 * SCORE_COPIES,
        "kept_logits": width * new * shape.vocab * 4 if keep_logits else 0,
    }
    if source:
        parts["encoder"] = shape.encoder_heads * source * source * 4 * SCORE_COPIES
        parts["cross_cache"] = 2 * shape.layers * shape.heads * shape.head_dim * shape.dtype_bytes * width * source
    parts["total"] = sum(parts.values())
    return parts


def _fits(shape: Shape, prompt: int, new: int, width: int, beam: bool, keep_logits: bool, source: int,
          limit: float) -> bool:
    return generation_bytes(shape, prompt, new, width, beam, keep_logits, source)["total"] <= limit


def check_generation(shape: Shape, prompt: int, new: int, width: int = 1, beam: bool = False,
                     keep_logits: bool = False, source: int = 0, what: str = "This generation") -> dict:
    """Refuse (InputError, before any forward) a generation whose estimate is over the request's
    share, saying what would fit: fewer beams or samples, a shorter text, fewer new tokens.
    -> the estimate's parts (bytes) and the share (MB) when it fits."""
    limit = share_mb() * MB
    parts = generation_bytes(shape, prompt, new, width, beam, keep_logits, source)
    parts["share_mb"] = share_mb()
    if parts["total"] <= limit:
        return parts
    args = (keep_logits, source, limit)
    fewer = [w for w in range(width - 1, 0, -1) if _fits(shape, prompt, new, w, beam, *args)]
    shorter = _largest(lambda p: _fits(shape, p, new, width, beam, *args), prompt)
    less_new = _largest(lambda n: _fits(shape, prompt, n, width, beam, *args), new)
    ways = []
    if fewer:
        ways.append(f"at most {fewer[0]} {'beams' if beam else 'sequences'} with this text")
    if shorter:
        ways.append(f"a text of at most {shorter:,} tokens")
    if less_new:
        ways.append(f"at most {less_new:,} new tokens")
    biggest = max((k for k in parts if k not in ("total", "share_mb")), key=lambda k: parts[k])
    raise InputError(
        f"{what} would hold about {parts['total'] / MB:,.0f} MB while it runs ({_WORDS[biggest]} "
        f"{parts[biggest] / MB:,.0f} MB: {width} x {prompt + new:,} tokens{' with beam reordering' if beam and width > 1 else ''}), "
        f"over this server's {share_mb():,.0f} MB per request (TLAB_REQUEST_MEMORY_MB). "
        + (f"Ask for {', or '.join(ways)}." if ways else "Ask for a shorter text, fewer new tokens and one sequence."))


_WORDS = {"cache": "the key/value cache", "prefill": "the prompt's attention scores",
          "steps": "each step's attention scores", "kept_logits": "the logits kept for every step",
          "encoder": "the encoder's attention scores", "cross_cache": "the cross-attention cache"}


def _largest(fits, upper: int) -> int:
    """The largest n in [1, upper) with fits(n) (fits is monotone), or 0."""
    lo, hi = 0, upper - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo if lo >= 1 and fits(lo) else 0
