"""What a contract's cost needs from a role's model before any weight is read: how many tokens a text is
to its tokenizer, and the model's shape (layers, heads, vocabulary) for the memory estimate.

Token counts come from the role's real tokenizer (loaded alone, once, in a fraction of a second): 2,000
zero-width characters are 2,000 characters but several thousand byte-level tokens, so characters are no
measure of work. The shape is the loaded model's where it is loaded; before that, the shape of the
model the local profile serves for the role (`FALLBACK_SHAPES`), the model a first request most likely gets.
"""

from __future__ import annotations

from backend.runtime.memory_budget import Shape

# the local profile's models (SmolLM2-135M-Instruct; all-MiniLM-L6-v2), read off their configs
DECODER_SHAPE = Shape(layers=30, heads=9, kv_heads=3, head_dim=64, vocab=49152)
ENCODER_SHAPE = Shape(layers=6, heads=12, kv_heads=12, head_dim=32, vocab=30522)
FALLBACK_SHAPES = {"encoder": ENCODER_SHAPE, "embedder": ENCODER_SHAPE, "sentiment": ENCODER_SHAPE,
                   "ner": ENCODER_SHAPE, "qa": ENCODER_SHAPE, "zero_shot": ENCODER_SHAPE}


CHARS_PER_TOKEN = 2  # a guess on the high side, for a tokenizer the door may not build (see `ready`)


def ready(role: str, override: str | None = None) -> bool:
    """Can the role's tokenizer load without building anything? A packaged GGUF decoder's tokenizer is read from
    its converted folder, which the set-up builds: the door (and its warm-up) never converts on a visitor's behalf
    (a cold cache's first call does it, and says so)."""
    from pathlib import Path

    from backend import hub
    from backend.hub import conversion

    try:
        r = hub.get_hub().resolve(role, override or None)
    except Exception:  # noqa: BLE001  a session's model or a bad override: the tokenizer call decides
        return True
    return not r.gguf_file or conversion.converted_dir(Path(r.location) / r.gguf_file).is_dir()


def tokens(role: str, text: str | None, override: str | None = None) -> int:
    """How many tokens `text` is to `role`'s tokenizer (no special tokens); 0 for no text; a character-based
    guess where the tokenizer is not built yet (`ready`)."""
    if not text:
        return 0
    if not ready(role, override):
        return len(text) // CHARS_PER_TOKEN + 1
    from backend import hub

    tok, _ = hub.tokenizer(role, override or None)
    return len(tok(text, add_special_tokens=False)["input_ids"])


def tokens_at_most(role: str, texts, cap: int, where: str, override: str | None = None) -> int:
    """The tokens of `texts` (a text, or a pair) as `role`'s tokenizer encodes them for the model, special tokens
    included; an InputError over `cap` (before any weight is read), in the entry point's words."""
    from backend import hub
    from backend.runtime.errors import InputError

    given = [t for t in texts if t]
    if not given or not ready(role, override):
        return 0  # nothing to count, or a tokenizer not built yet: the entry point counts
    tok, _ = hub.tokenizer(role, override or None)
    n = len(tok(*given[:2], add_special_tokens=True)["input_ids"]) + sum(tokens(role, t, override) for t in given[2:])
    if n > cap:
        raise InputError(f"The text has {n:,} tokens; {where} takes at most {cap}. Shorten it.")
    return n


def shape(role: str, override: str | None = None) -> Shape:
    """The role's model shape: the loaded model's, else the local profile's model for the role."""
    from backend import hub
    from backend.engines.generation.prefill import shape_of

    h = hub.get_hub()
    try:
        if h.is_loaded(role, override or None):
            return shape_of(h.load(role, override or None).model)
    except Exception:  # noqa: BLE001  an override that does not resolve: the handler says so
        pass
    return FALLBACK_SHAPES.get(role, DECODER_SHAPE)


def generation_cost(role: str, prompt_tokens: int, new: int, width: int = 1, beam: bool = False,
                    override: str | None = None, keep_logits: bool = False, what: str = "this generation"):
    """A generation's contract cost (backend/runtime/contract.py): memory from `memory_budget.generation_bytes`
    with the role's shape; time = the prompt read once in chunks plus `new` steps of `width` sequences, each
    step a little slower per extra sequence (beam 4 measured 1.5-1.7x greedy). Stoppable: every step and
    every prefill chunk checks the budget, so a long run stops at it with the text so far."""
    from backend.runtime import speeds
    from backend.runtime.contract import Cost
    from backend.runtime.memory_budget import MB, PREFILL_CHUNK, check_generation

    s = shape(role, override)
    # over the request's share: refused here, in the handler's words, with what would fit (fewer beams...)
    parts = check_generation(s, prompt_tokens, new, width, beam, keep_logits, what=what[:1].upper() + what[1:])
    context = prompt_tokens + new
    step = (1 + 0.2 * (width - 1)) * (1 + context / 2048) / speeds.per_s("decoder_steps")
    prefill = speeds.seconds("decoder_tokens", prompt_tokens)
    chunk = speeds.seconds("decoder_tokens", min(prompt_tokens, PREFILL_CHUNK)) * (1 + prompt_tokens / 2048)
    return Cost(mb=parts["total"] / MB, s=prefill + new * step, stoppable=True, step_s=max(step, chunk), what=what,
                ask=f"Ask for fewer new tokens{' or beams' if width > 1 else ''}, or a shorter text.")


WARM_ROLES = ("decoder", "encoder", "embedder", "sentiment", "ner", "qa", "fill_mask", "text_generation")


def warm(roles=WARM_ROLES) -> None:
    """Load the tokenizers the door counts with, so that a first request's price takes milliseconds, not the
    second a tokenizer takes to load (at start, in a thread: a role that fails to resolve is skipped)."""
    import time

    from backend import hub

    started = time.monotonic()
    for role in roles:
        try:
            if ready(role):
                hub.tokenizer(role)
        except Exception:  # noqa: BLE001  a missing model fails only its own tabs
            continue
    print(f"{WARM_LINE} in {time.monotonic() - started:.1f} s", flush=True)


WARM_LINE = "the door's tokenizers are loaded"  # the app's log says it (the contract suite waits for it)
