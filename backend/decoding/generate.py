"""Decoding strategies made visible: one instrumented `model.generate` per run.

Public API (the Pipelines tab imports it too):

    settings = DecodeSettings(strategy="sample", top_p=0.9, max_new_tokens=64, seed=0)
    settings = DecodeSettings.from_dict({"strategy": "beam", "num_beams": 4})  # JSON in
    settings.validate()                       # -> settings (normalised); raises InputError
    result = decode(model, tokenizer, prompt, settings)   # -> DecodeResult
    result.text, result.to_dict()            # JSON-able: text, tokens, steps, log-prob, timing
    for text, result in decode_stream(model, tokenizer, prompt, settings): ...
    rows = compare(model, tokenizer, prompt, [settings_or_dict, ...])  # 2-4 strategies
    dist = step_distribution(model, tokenizer, token_ids, temperatures=(0.5, 1, 2), top_p=0.9)

`decode` runs plain `model.generate` with the same logits processors generate would build
(repetition penalty, no-repeat n-gram, temperature, top-k, top-p, in generate's order), plus
taps (`decoding_record`) that keep only the top candidates per step. Sequence log-prob is the
sum of the chosen tokens' log-probs under the model's own (unwarped) distribution, as the book
computes it; perplexity = exp(-mean log-prob).
"""

from __future__ import annotations

import json
import math
import queue
import random
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import torch
from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    MinNewTokensLengthLogitsProcessor,
    NoRepeatNGramLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
    StoppingCriteria,
    StoppingCriteriaList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.generation.streamers import BaseStreamer

from backend.decoding.filters import cumulative_curve, distinct_n, entropy, perplexity, softmax, top_k_mask, top_p_mask
from backend.decoding.record import BeamRecorder, StepRecorder, Tap
from backend.errors import InputError
from backend.validation import as_bool as _as_bool
from backend.validation import as_float as _as_float
from backend.validation import as_int as _as_int
from backend.validation import check_text

STRATEGIES = ("greedy", "beam", "sample")
MAX_NEW_TOKENS_CAP = 512
MAX_CONTEXT_TOKENS = 2048  # prompt + new tokens; eager attention on CPU stays interactive
MAX_BEAMS = 16
MAX_SAMPLES = 8
MAX_TOP_N = 20
BEAM_TREE_STEPS = 40
MAX_COMPARE = 4


# ----------------------------------------------------------------------------- settings


@dataclass
class DecodeSettings:
    """One decoding strategy, as plain values (what the UI widgets and the API JSON carry).

    Only the fields of the chosen `strategy` matter: temperature/top_k/top_p for `sample`;
    num_beams/length_penalty/early_stopping for `beam`. `num_return_sequences` > 1 needs beam
    (at most num_beams) or sample. `seed` None picks one and reports it, so any run can be
    repeated. `top_n`: candidates kept per step in the step table. `min_new_tokens`: EOS is
    blocked until that many tokens exist (benchmarks use it to force a length).
    """

    strategy: str = "greedy"
    max_new_tokens: int = 64
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    num_beams: int = 4
    length_penalty: float = 1.0
    no_repeat_ngram_size: int = 0
    early_stopping: bool = False
    num_return_sequences: int = 1
    repetition_penalty: float = 1.0
    seed: int | None = None
    chat_template: bool = False
    top_n: int = 5
    min_new_tokens: int = 0
    name: str = ""

    @classmethod
    def from_dict(cls, data: dict | "DecodeSettings" | None) -> "DecodeSettings":
        """Settings from a JSON-like dict; unknown keys are an InputError (typos must not pass)."""
        if isinstance(data, DecodeSettings):
            return cls(**asdict(data)).validate()
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InputError(f"Strategy settings must be a JSON object like {{\"strategy\": \"greedy\"}}, got {type(data).__name__}.")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"Unknown setting(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(known))}.")
        return cls(**{k: v for k, v in data.items() if v is not None or k == "seed"}).validate()

    def to_dict(self) -> dict:
        return asdict(self)

    def label(self) -> str:
        """A short human name, e.g. 'beam 4' or 'sample T=0.7 top-p 0.9'."""
        if self.name:
            return self.name
        if self.strategy == "greedy":
            parts = ["greedy"]
        elif self.strategy == "beam":
            parts = [f"beam {self.num_beams}"]
            if self.no_repeat_ngram_size:
                parts.append(f"no-repeat {self.no_repeat_ngram_size}")
            if self.length_penalty != 1.0:
                parts.append(f"len-pen {self.length_penalty:g}")
        else:
            parts = ["sample"]
            if self.temperature != 1.0:
                parts.append(f"T={self.temperature:g}")
            if self.top_k:
                parts.append(f"top-k {self.top_k}")
            if self.top_p < 1.0:
                parts.append(f"top-p {self.top_p:g}")
        if self.repetition_penalty != 1.0:
            parts.append(f"rep-pen {self.repetition_penalty:g}")
        if self.min_new_tokens:
            parts.append(f"min {self.min_new_tokens} tokens")
        if self.strategy != "beam" and self.no_repeat_ngram_size:
            parts.append(f"no-repeat {self.no_repeat_ngram_size}")
        return " ".join(parts)

    def validate(self) -> "DecodeSettings":
        """Coerce types and check ranges in place; raise InputError saying what to change."""
        strategy = str(self.strategy or "").strip().lower()
        aliases = {"greedy search": "greedy", "beam search": "beam", "sampling": "sample", "top-k": "sample",
                   "top-p": "sample", "nucleus": "sample"}
        strategy = aliases.get(strategy, strategy)
        if strategy not in STRATEGIES:
            raise InputError(f"Unknown strategy {self.strategy!r}; choose one of: {', '.join(STRATEGIES)}.")
        self.strategy = strategy

        self.max_new_tokens = _as_int("max_new_tokens", self.max_new_tokens)
        if self.max_new_tokens < 1:
            raise InputError("max_new_tokens must be at least 1.")
        if self.max_new_tokens > MAX_NEW_TOKENS_CAP:
            raise InputError(
                f"max_new_tokens is {self.max_new_tokens}, over the cap of {MAX_NEW_TOKENS_CAP}; "
                f"ask for {MAX_NEW_TOKENS_CAP} or fewer."
            )

        self.temperature = _as_float("temperature", self.temperature)
        self.top_k = _as_int("top_k", self.top_k)
        self.top_p = _as_float("top_p", self.top_p)
        if strategy == "sample":
            if self.temperature <= 0:
                raise InputError(
                    f"temperature must be > 0 for sampling (got {self.temperature:g}): it divides the logits, and "
                    "as it goes to 0 sampling turns into always taking the most likely token. "
                    "For that, choose the 'greedy' strategy; otherwise use e.g. 0.7."
                )
            if self.top_k < 0:
                raise InputError(f"top_k must be 0 (no top-k cut) or a positive number of tokens, got {self.top_k}.")
            if not 0 < self.top_p <= 1:
                raise InputError(f"top_p must be in (0, 1] (1 = no cut), got {self.top_p:g}; try 0.9.")

        self.num_beams = _as_int("num_beams", self.num_beams)
        self.num_return_sequences = _as_int("num_return_sequences", self.num_return_sequences)
        self.length_penalty = _as_float("length_penalty", self.length_penalty)
        self.early_stopping = _as_bool("early_stopping", self.early_stopping)
        if self.num_return_sequences < 1:
            raise InputError(f"num_return_sequences must be at least 1, got {self.num_return_sequences}.")
        if strategy == "beam":
            if not 2 <= self.num_beams <= MAX_BEAMS:
                raise InputError(f"num_beams must be between 2 and {MAX_BEAMS} for beam search, got {self.num_beams}.")
            if self.num_return_sequences > self.num_beams:
                raise InputError(
                    f"num_return_sequences ({self.num_return_sequences}) cannot exceed num_beams ({self.num_beams}): "
                    "beam search only has that many hypotheses. Raise num_beams or lower num_return_sequences."
                )
        elif strategy == "greedy":
            if self.num_return_sequences != 1:
                raise InputError(
                    "Greedy search is deterministic, so it returns exactly one sequence "
                    f"(num_return_sequences={self.num_return_sequences}). Use beam or sample for several."
                )
        elif self.num_return_sequences > MAX_SAMPLES:
            raise InputError(f"num_return_sequences must be between 1 and {MAX_SAMPLES} for sampling, got {self.num_return_sequences}.")

        self.no_repeat_ngram_size = _as_int("no_repeat_ngram_size", self.no_repeat_ngram_size)
        if self.no_repeat_ngram_size < 0:
            raise InputError(f"no_repeat_ngram_size must be 0 (off) or a positive n-gram size, got {self.no_repeat_ngram_size}.")
        self.repetition_penalty = _as_float("repetition_penalty", self.repetition_penalty)
        if self.repetition_penalty <= 0:
            raise InputError(f"repetition_penalty must be > 0 (1 = off, 1.2 is typical), got {self.repetition_penalty:g}.")

        if self.seed is not None and not (isinstance(self.seed, str) and not self.seed.strip()):
            seed = _as_int("seed", self.seed, "a whole number (e.g. 42) or empty for a random one")
            if not 0 <= seed < 2**63:
                raise InputError(f"seed must be between 0 and 2**63-1, got {seed}.")
            self.seed = seed
        else:
            self.seed = None
        self.chat_template = _as_bool("chat_template", self.chat_template)
        self.min_new_tokens = _as_int("min_new_tokens", self.min_new_tokens)
        if not 0 <= self.min_new_tokens <= self.max_new_tokens:
            raise InputError(
                f"min_new_tokens must be between 0 and max_new_tokens ({self.max_new_tokens}), got {self.min_new_tokens}."
            )
        self.top_n = _as_int("top_n", self.top_n)
        if not 1 <= self.top_n <= MAX_TOP_N:
            raise InputError(f"top_n (candidates shown per step) must be between 1 and {MAX_TOP_N}, got {self.top_n}.")
        self.name = str(self.name or "")
        return self


# ----------------------------------------------------------------------------- results


@dataclass
class DecodeResult:
    """One run, as plain data. `to_dict()` is the `/decode` API payload (less `model`)."""

    text: str  # the first (best) output's generated text
    prompt_text: str  # what the model saw (after chat template and truncation)
    prompt_token_ids: list[int]
    outputs: list[dict]  # one per returned sequence: text, token_ids, tokens, logprob, perplexity, distinct-n
    steps: list[dict]  # per-step table for the first output
    sequence_logprob: float
    perplexity: float
    distinct_2: float
    distinct_3: float
    n_new_tokens: int
    generate_seconds: float
    seconds: float
    tokens_per_s: float
    finish_reason: str  # eos | length | stopped
    settings: dict
    label: str
    beam_tree: dict | None = None
    warnings: list[str] = field(default_factory=list)
    truncated_prompt: bool = False
    record_bytes: int = 0  # memory the per-step record held at the end of generation

    def to_dict(self) -> dict:
        return _jsonable(asdict(self))


def _jsonable(obj: Any) -> Any:
    """Floats that JSON can carry (nan/inf -> None), numpy scalars to Python."""
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


# ----------------------------------------------------------------------------- prompt


def build_prompt(tokenizer, prompt: str, settings: DecodeSettings, context_limit: int) -> tuple[str, list[int], list[str]]:
    """Prompt text -> (text the model sees, its token ids, warnings).

    With `chat_template` the prompt becomes one user turn of the model's chat template. A
    prompt that leaves no room for `max_new_tokens` inside `context_limit` is cut from the left
    (the end of a prompt matters most for what comes next), and a warning says so.
    """
    prompt = check_text(prompt, "prompt")
    warnings: list[str] = []
    text = prompt
    if settings.chat_template:
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            warnings.append("This model has no chat template, so the prompt was used as raw text to continue.")
            ids = tokenizer(text)["input_ids"]
    else:
        ids = tokenizer(text)["input_ids"]
    if not ids:
        raise InputError("The prompt produced no tokens; type some text for the model to continue.")
    room = context_limit - settings.max_new_tokens
    if room < 1:
        raise InputError(
            f"max_new_tokens ({settings.max_new_tokens}) leaves no room for the prompt in the {context_limit}-token "
            "context; lower max_new_tokens."
        )
    if len(ids) > room:
        dropped = len(ids) - room
        ids = ids[-room:]
        text = tokenizer.decode(ids)
        warnings.append(
            f"The prompt is {room + dropped} tokens, longer than the {context_limit}-token context leaves room for "
            f"with {settings.max_new_tokens} new tokens: the first {dropped} tokens were cut (truncated from the left)."
        )
    return text, list(ids), warnings


def context_limit(model) -> int:
    """Tokens the playground allows (prompt + new): the model's positions, at most MAX_CONTEXT_TOKENS."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    n = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or MAX_CONTEXT_TOKENS
    return int(min(n, MAX_CONTEXT_TOKENS))


# ----------------------------------------------------------------------------- generation


class _StopFlag(StoppingCriteria):
    """Stops generation at the next step once `event` is set (the UI's Stop button)."""

    def __init__(self, event: threading.Event):
        self.event = event

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


class _QueueStreamer(BaseStreamer):
    """Hands each new token id (first row) to a queue; generate's first put is the prompt."""

    def __init__(self, q: queue.Queue):
        self.q = q
        self.seen_prompt = False

    def put(self, value) -> None:
        if not self.seen_prompt:
            self.seen_prompt = True
            return
        self.q.put(("token", int(value.reshape(-1)[0])))

    def end(self) -> None:
        pass


def build_processors(settings: DecodeSettings, prompt_len: int = 0, eos: set[int] | None = None) -> tuple[list, list]:
    """The logits processors generate would build for these settings, in generate's order.

    Returns (all processors in order, [penalties, temperature, cuts]). Generate itself gets a
    neutral config, so nothing is applied twice.
    """
    plain: list = []
    if settings.min_new_tokens > 0 and eos:
        plain.append(MinNewTokensLengthLogitsProcessor(prompt_len, settings.min_new_tokens, sorted(eos)))
    if settings.repetition_penalty != 1.0:
        plain.append(RepetitionPenaltyLogitsProcessor(settings.repetition_penalty))
    if settings.no_repeat_ngram_size > 0:
        plain.append(NoRepeatNGramLogitsProcessor(settings.no_repeat_ngram_size))
    warpers_t: list = []
    warpers_cut: list = []
    if settings.strategy == "sample":
        if settings.temperature != 1.0:
            warpers_t.append(TemperatureLogitsWarper(settings.temperature))
        if settings.top_k:
            warpers_cut.append(TopKLogitsWarper(top_k=settings.top_k))
        if settings.top_p < 1.0:
            warpers_cut.append(TopPLogitsWarper(top_p=settings.top_p))
    return plain + warpers_t + warpers_cut, [plain, warpers_t, warpers_cut]


def generation_config(model, tokenizer, settings: DecodeSettings) -> GenerationConfig:
    """A generation config with the strategy's search settings and every warper off.

    The warpers and penalties travel as explicit processors (see `build_processors`), so the
    model's own generation_config defaults (e.g. a temperature) cannot sneak in.
    """
    base = getattr(model, "generation_config", None)
    eos = getattr(base, "eos_token_id", None) if base is not None else None
    if eos is None:
        eos = tokenizer.eos_token_id
    pad = getattr(base, "pad_token_id", None) if base is not None else None
    if pad is None:
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos if isinstance(eos, int) else eos[0])
    beam = settings.strategy == "beam"
    # Unset values are filled from the model's generation_config, then from transformers'
    # defaults (top_k=50!), so the neutral values are spelled out; warpers only matter when
    # sampling, and setting them otherwise only earns a warning.
    neutral = dict(temperature=1.0, top_k=0, top_p=1.0, min_p=None, typical_p=1.0) if settings.strategy == "sample" else {}
    return GenerationConfig(
        max_new_tokens=settings.max_new_tokens,
        do_sample=settings.strategy == "sample",
        num_beams=settings.num_beams if beam else 1,
        num_return_sequences=settings.num_return_sequences,
        length_penalty=settings.length_penalty if beam else 1.0,
        early_stopping=settings.early_stopping if beam else False,
        repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        **neutral,
        eos_token_id=eos,
        pad_token_id=pad,
        bos_token_id=getattr(base, "bos_token_id", None) if base is not None else None,
    )


def _eos_ids(config: GenerationConfig) -> set[int]:
    eos = config.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def _trim(ids: list[int], eos: set[int]) -> tuple[list[int], bool]:
    """Generated ids up to and including the first EOS; True when one was found."""
    for i, t in enumerate(ids):
        if t in eos:
            return ids[: i + 1], True
    return ids, False


class _TokenText:
    """Display text of single tokens, decoded once each (" the", "\\n")."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.cache: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        token_id = int(token_id)
        if token_id not in self.cache:
            self.cache[token_id] = self.tokenizer.decode([token_id])
        return self.cache[token_id]


def score_sequence(model, input_ids: Sequence[int], prompt_len: int, top_n: int = 5, chunk: int = 64) -> dict:
    """Score generated tokens with one forward pass, the book's way; lists per generated token.

    Returns `logprob` (each token's log-prob under the model), `rank` (1 = most likely),
    `entropy`, and `top_ids` / `top_logp` (top_n candidates). The LM head runs on chunks of
    positions so no [length x vocab] tensor is held at once.
    """
    ids = torch.tensor([list(input_ids)], device=model.device)
    n = ids.shape[1]
    out: dict[str, list] = {"logprob": [], "rank": [], "entropy": [], "top_ids": [], "top_logp": []}
    if n <= prompt_len:
        return out
    with torch.inference_mode():
        hidden = model.base_model(input_ids=ids).last_hidden_state[0]
        head = model.get_output_embeddings()
        for start in range(prompt_len - 1, n - 1, chunk):
            stop = min(start + chunk, n - 1)
            logp = torch.log_softmax(head(hidden[start:stop]).float(), dim=-1)
            target = ids[0, start + 1 : stop + 1, None]
            lp = logp.gather(-1, target)
            out["logprob"] += lp[:, 0].tolist()
            out["rank"] += ((logp > lp).sum(-1) + 1).tolist()
            p = logp.exp()
            out["entropy"] += (-(torch.where(p > 0, p * logp, torch.zeros_like(p))).sum(-1)).tolist()
            vals, top = logp.topk(top_n, dim=-1)
            out["top_ids"] += top.tolist()
            out["top_logp"] += vals.tolist()
    return out


def _round(x: float, nd: int = 6) -> float:
    return float(round(float(x), nd))


def _prob(logp: float) -> float:
    return _round(math.exp(logp)) if logp is not None and logp > -1e30 else 0.0


def _output(ids: list[int], logps: list[float], found_eos: bool, tok: _TokenText, tokenizer) -> dict:
    total = float(sum(logps))
    return {
        "text": tokenizer.decode(ids, skip_special_tokens=True),
        "token_ids": ids,
        "tokens": [tok(t) for t in ids],
        "logprob": _round(total, 4),
        "perplexity": _round(perplexity(total, len(ids)), 4),
        "n_tokens": len(ids),
        "distinct_2": _round(distinct_n(ids, 2), 4),
        "distinct_3": _round(distinct_n(ids, 3), 4),
        "ended_with_eos": found_eos,
    }


def decode(
    model,
    tokenizer,
    prompt: str,
    settings: DecodeSettings | dict | None = None,
    *,
    stop_event: threading.Event | None = None,
    streamer: BaseStreamer | None = None,
) -> DecodeResult:
    """Generate with one strategy and explain it (see the module docstring).

    `stop_event`: set it from another thread to stop at the next token; the partial result is
    returned with finish_reason "stopped" and the model stays usable. `streamer`: a
    transformers streamer for greedy/sample runs with one sequence (beam search cannot stream).
    """
    settings = DecodeSettings.from_dict(settings)  # a copy: the caller's object is never changed
    started = time.perf_counter()
    limit = context_limit(model)
    prompt_text, prompt_ids, warnings = build_prompt(tokenizer, prompt, settings, limit)
    if settings.seed is None and settings.strategy == "sample":
        settings.seed = random.randrange(2**31)
    gen_config = generation_config(model, tokenizer, settings)
    eos = _eos_ids(gen_config)
    _, (plain, warp_t, warp_cut) = build_processors(settings, len(prompt_ids), eos)

    beam = settings.strategy == "beam"
    if beam:
        recorder: StepRecorder | BeamRecorder = BeamRecorder(settings.num_beams, min(settings.num_beams, 4), BEAM_TREE_STEPS)
        procs = [Tap(recorder, "raw"), *plain]
    else:
        # Taps only where the distribution changes: greedy needs the raw one only (the table
        # shows the model's probabilities); sampling also after temperature and after the cut.
        sampling = settings.strategy == "sample"
        recorder = StepRecorder(settings.top_n, sampling=sampling)
        procs = [Tap(recorder, "raw"), *plain, *warp_t]
        if sampling and (plain or warp_t):
            procs.append(Tap(recorder, "temp"))
        procs += warp_cut
        if sampling:
            procs.append(Tap(recorder, "final"))
    stops = StoppingCriteriaList([_StopFlag(stop_event)]) if stop_event is not None else None
    if streamer is not None and (beam or settings.num_return_sequences > 1):
        streamer = None

    input_ids = torch.tensor([prompt_ids], device=model.device)
    if settings.seed is not None:
        torch.manual_seed(settings.seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(settings.seed)
    t0 = time.perf_counter()
    with torch.inference_mode():
        sequences = model.generate(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            generation_config=gen_config,
            logits_processor=LogitsProcessorList(procs),
            stopping_criteria=stops,
            streamer=streamer,
        )
    gen_seconds = time.perf_counter() - t0
    stopped = stop_event is not None and stop_event.is_set()

    tok = _TokenText(tokenizer)
    plen = len(prompt_ids)
    rows = sequences[:, plen:].cpu().tolist()
    outputs: list[dict] = []
    steps: list[dict] = []
    beam_tree = None
    if beam:
        trimmed = [_trim(r, eos) for r in rows]
        for i, (ids, found) in enumerate(trimmed):
            scored = score_sequence(model, prompt_ids + ids, plen, settings.top_n)
            outputs.append(_output(ids, scored["logprob"], found, tok, tokenizer))
            if i == 0:
                steps = _steps_from_scores(ids, scored, tok)
        beam_tree = _beam_tree(recorder.finalize(), prompt_ids, trimmed[0][0] if trimmed else [], eos, tok)
    else:
        rec = recorder.finalize(sequences, plen)
        for b, row in enumerate(rows):
            ids, found = _trim(row, eos)
            ids = ids[: rec["steps"]]
            chosen = rec["chosen"][b][: len(ids)] if rec["steps"] else []
            outputs.append(_output(ids, [c[1] for c in chosen], found, tok, tokenizer))
            if b == 0:
                steps = _steps_from_record(rec, 0, len(ids), tok, settings.strategy == "sample")

    first = outputs[0] if outputs else _output([], [], False, tok, tokenizer)
    n_new = first["n_tokens"]
    if stopped:
        finish = "stopped"
    elif first["ended_with_eos"]:
        finish = "eos"
    else:
        finish = "length"
    return DecodeResult(
        text=first["text"],
        prompt_text=prompt_text,
        prompt_token_ids=prompt_ids,
        outputs=outputs,
        steps=steps,
        sequence_logprob=first["logprob"],
        perplexity=first["perplexity"],
        distinct_2=first["distinct_2"],
        distinct_3=first["distinct_3"],
        n_new_tokens=n_new,
        generate_seconds=_round(gen_seconds, 4),
        seconds=_round(time.perf_counter() - started, 4),
        tokens_per_s=_round(n_new / gen_seconds if gen_seconds > 0 else 0.0, 3),
        finish_reason=finish,
        settings=settings.to_dict(),
        label=settings.label(),
        beam_tree=beam_tree,
        warnings=warnings,
        truncated_prompt=any("truncated" in w for w in warnings),
        record_bytes=int(getattr(recorder, "peak_bytes", 0)),
    )


def _steps_from_record(rec: dict, row: int, n: int, tok: _TokenText, sampling: bool) -> list[dict]:
    """The book's step table from the taps' record: candidates, chosen token, rank, prob."""
    steps = []
    for t in range(n):
        cid, lp_raw, rank, lp_temp, lp_final = rec["chosen"][row][t]
        cands = []
        for j, token_id in enumerate(rec["cand_ids"][row][t]):
            c = {"token_id": int(token_id), "token": tok(token_id), "prob": _prob(rec["cand_raw"][row][t][j])}
            if sampling:
                c["prob_temperature"] = _prob(rec["cand_temp"][row][t][j])
                c["prob_after_cut"] = _prob(rec["cand_final"][row][t][j])
            cands.append(c)
        step = {
            "step": t,
            "token_id": int(cid),
            "token": tok(cid),
            "logprob": _round(lp_raw),
            "prob": _prob(lp_raw),
            "rank": int(rank),
            "entropy": _round(rec["entropy_raw"][row][t], 4),
            "candidates": cands,
        }
        if sampling:
            step["prob_temperature"] = _prob(lp_temp)
            step["prob_after_cut"] = _prob(lp_final)
            step["entropy_temperature"] = _round(rec["entropy_temp"][row][t], 4)
            step["survivors"] = int(rec["survivors"][row][t])
        steps.append(step)
    return steps


def _steps_from_scores(ids: list[int], scored: dict, tok: _TokenText) -> list[dict]:
    """The step table of a beam output, from `score_sequence`'s forward pass."""
    steps = []
    for t, token_id in enumerate(ids):
        lp = scored["logprob"][t]
        steps.append(
            {
                "step": t,
                "token_id": int(token_id),
                "token": tok(token_id),
                "logprob": _round(lp),
                "prob": _prob(lp),
                "rank": int(scored["rank"][t]),
                "entropy": _round(scored["entropy"][t], 4),
                "candidates": [
                    {"token_id": int(c), "token": tok(c), "prob": _prob(v)}
                    for c, v in zip(scored["top_ids"][t], scored["top_logp"][t])
                ],
            }
        )
    return steps


def _beam_tree(rec: dict, prompt_ids: list[int], best: list[int], eos: set[int], tok: _TokenText) -> dict:
    """Nodes of the beam tree: the running beams of each step and their top candidates.

    Each node: id, depth (tokens generated), parent, token, logprob (the token's), cum_logprob
    (sum over the path), status: root | kept (became a running beam) | eos (an ended
    hypothesis) | pruned; `best` marks the path of the returned best sequence.
    """
    nodes = [{"id": 0, "depth": 0, "parent": None, "token": "", "token_id": None, "logprob": 0.0,
              "cum_logprob": 0.0, "status": "root", "best": True, "beam": 0}]
    row_node: dict[int, int] = {0: 0}  # running row at the current depth -> node id
    n_steps = len(rec["cand_ids"])
    for t in range(n_steps):
        cum = rec["cum"][t]
        kept: dict[tuple[int, int], int] = {}
        if t + 1 < len(rec["cum"]):
            for new_row, (parent, token) in enumerate(zip(rec["parents"][t], rec["tokens"][t])):
                kept.setdefault((int(parent), int(token)), new_row)
        next_row_node: dict[int, int] = {}
        # an EOS candidate ends a hypothesis when it ranks within the step's top num_beams
        pool = sorted((cum[r] + lp for r in row_node for lp in rec["cand_logp"][t][r]), reverse=True)
        eos_floor = pool[min(len(cum), len(pool)) - 1] if pool else float("inf")
        for row, node_id in row_node.items():
            cand = list(zip(rec["cand_ids"][t][row], rec["cand_logp"][t][row]))
            # a kept child outside this row's top candidates is still drawn
            for (p, token), _ in kept.items():
                if p == row and token not in {int(c) for c, _ in cand}:
                    cand.append((token, None))
            for token, lp in cand:
                token = int(token)
                new_row = kept.get((row, token))
                if lp is None:
                    lp = rec["cum"][t + 1][new_row] - cum[row]
                if new_row is not None:
                    status = "kept"
                elif token in eos and cum[row] + lp >= eos_floor - 1e-6:
                    status = "eos"
                else:
                    status = "pruned"
                nid = len(nodes)
                nodes.append({"id": nid, "depth": t + 1, "parent": node_id, "token": tok(token), "token_id": token,
                              "logprob": _round(lp, 4), "cum_logprob": _round(cum[row] + lp, 4), "status": status,
                              "best": False, "beam": row})
                if new_row is not None:
                    next_row_node[new_row] = nid
        row_node = next_row_node
        if not row_node:
            break
    # mark the best output's path
    by_parent: dict[int, dict[int, int]] = {}
    for n in nodes[1:]:
        by_parent.setdefault(n["parent"], {}).setdefault(n["token_id"], n["id"])
    cur = 0
    for token in best:
        nxt = by_parent.get(cur, {}).get(int(token))
        if nxt is None:
            break
        nodes[nxt]["best"] = True
        cur = nxt
    return {"nodes": nodes, "steps": n_steps, "truncated": bool(rec["truncated"]), "max_steps": BEAM_TREE_STEPS}


# ----------------------------------------------------------------------------- streaming


def decode_stream(model, tokenizer, prompt: str, settings: DecodeSettings | dict | None = None) -> Iterator[tuple[str, DecodeResult | None]]:
    """Yield (text so far, None) as tokens arrive, then (final text, DecodeResult).

    Generation runs in a worker thread. Closing the iterator early (the UI's Stop) sets the
    stop flag and waits for generate to return, so the model is free for the next request.
    Beam search cannot stream: it yields only the final result.
    """
    settings = DecodeSettings.from_dict(settings)
    build_prompt(tokenizer, prompt, settings, context_limit(model))  # raise InputError here, in the caller
    q: queue.Queue = queue.Queue()
    stop = threading.Event()
    can_stream = settings.strategy != "beam" and settings.num_return_sequences == 1

    def work() -> None:
        try:
            res = decode(model, tokenizer, prompt, settings, stop_event=stop,
                         streamer=_QueueStreamer(q) if can_stream else None)
            q.put(("done", res))
        except BaseException as exc:  # handed to the consumer thread
            q.put(("error", exc))

    worker = threading.Thread(target=work, name="decode", daemon=True)
    worker.start()
    ids: list[int] = []
    try:
        while True:
            kind, value = q.get()
            if kind == "token":
                ids.append(value)
                yield tokenizer.decode(ids, skip_special_tokens=True), None
            elif kind == "done":
                yield value.text, value
                return
            else:
                raise value
    finally:
        stop.set()
        worker.join()


# ----------------------------------------------------------------------------- compare


def parse_strategies(strategies: Any) -> list[DecodeSettings]:
    """A JSON list (string or list) of 2-4 strategy dicts -> validated settings."""
    if isinstance(strategies, str):
        text = strategies.strip()
        if not text:
            raise InputError('Give 2 to 4 strategies as a JSON list, e.g. [{"strategy": "greedy"}, {"strategy": "beam", "num_beams": 4}].')
        try:
            strategies = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"The strategies are not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).") from None
    if isinstance(strategies, dict):
        strategies = [strategies]
    if not isinstance(strategies, list):
        raise InputError("The strategies must be a JSON list of objects, one per strategy.")
    if not 2 <= len(strategies) <= MAX_COMPARE:
        raise InputError(f"Compare takes 2 to {MAX_COMPARE} strategies; got {len(strategies)}.")
    out = []
    for i, item in enumerate(strategies, 1):
        try:
            out.append(DecodeSettings.from_dict(item))
        except InputError as exc:
            raise InputError(f"Strategy {i}: {exc}") from None
    return out


def compare(model, tokenizer, prompt: str, strategies: Any, progress=None) -> list[dict]:
    """Run 2-4 strategies on one prompt; one row per strategy (plus its full result under `result`).

    `progress(i, n, label)` is called before each run, if given.
    """
    settings = parse_strategies(strategies)
    rows = []
    for i, s in enumerate(settings):
        if progress is not None:
            progress(i, len(settings), s.label())
        res = decode(model, tokenizer, prompt, s)
        rows.append(
            {
                "strategy": res.label,
                "text": res.text,
                "sequence_logprob": res.sequence_logprob,
                "perplexity": res.perplexity,
                "distinct_2": res.distinct_2,
                "distinct_3": res.distinct_3,
                "n_new_tokens": res.n_new_tokens,
                "tokens_per_s": res.tokens_per_s,
                "seconds": res.generate_seconds,
                "finish_reason": res.finish_reason,
                "settings": res.settings,
                "warnings": res.warnings,
            }
        )
    return rows


# ----------------------------------------------------------------------------- one step, several temperatures


def step_distribution(
    model,
    tokenizer,
    token_ids: Sequence[int],
    temperatures: Sequence[float] = (0.5, 1.0, 2.0),
    top_k: int = 0,
    top_p: float = 0.9,
    n: int = 30,
    cumulative_temperature: float = 1.0,
) -> dict:
    """The next-token distribution after `token_ids`, for the temperature overlay and top-p plot.

    One forward pass. Returns the top-n tokens (by the model's own probability) with their
    probability at each temperature, each temperature's entropy and how many tokens survive
    top-k/top-p there, and the cumulative curve at `cumulative_temperature` with the top-p cut.
    """
    if not token_ids:
        raise InputError("There is no context to predict from; run a generation first.")
    temps = []
    for t in temperatures:
        t = _as_float("temperature", t)
        if t <= 0:
            raise InputError(f"temperature must be > 0 for the distribution plot, got {t:g}.")
        temps.append(t)
    if not 0 < top_p <= 1:
        raise InputError(f"top_p must be in (0, 1], got {top_p:g}.")
    ids = torch.tensor([list(token_ids)[-context_limit(model):]], device=model.device)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, -1].float().cpu().numpy()
    base = softmax(logits)
    order = np.argsort(-base)[:n]
    tok = _TokenText(tokenizer)
    per_t = []
    for t in temps:
        p = softmax(logits, t)
        k_mask = top_k_mask(p, top_k)
        pk = np.where(k_mask, p, 0.0)
        pk = pk / pk.sum()
        survivors = int(top_p_mask(pk, top_p).sum())
        per_t.append({"temperature": t, "probs": [_round(x) for x in p[order]], "entropy": _round(entropy(p), 4),
                      "survivors_top_k": int(k_mask.sum()), "survivors_top_p": survivors})
    curve = cumulative_curve(softmax(logits, _as_float("temperature", cumulative_temperature)), top_p)
    return {
        "position": len(token_ids),
        "tokens": [tok(i) for i in order],
        "token_ids": [int(i) for i in order],
        "temperatures": per_t,
        "cumulative": {**curve, "top_p": top_p, "temperature": cumulative_temperature},
        "vocab_size": int(logits.shape[0]),
    }


# ----------------------------------------------------------------------------- presets


UNICORN = (
    "In a shocking finding, scientist discovered a herd of unicorns living in a remote, previously unexplored "
    "valley, in the Andes Mountains. Even more surprising to the researchers was the fact that the unicorns "
    "spoke perfect English.\n\n"
)

# The book's chapter 5 experiments, as (prompt, settings) pairs.
PRESETS: dict[str, dict] = {
    "Transformers are the… (greedy, 8 steps)": {"prompt": "Transformers are the", "settings": {"strategy": "greedy", "max_new_tokens": 8}},
    "Unicorns: greedy": {"prompt": UNICORN, "settings": {"strategy": "greedy", "max_new_tokens": 128}},
    "Unicorns: beam 5": {"prompt": UNICORN, "settings": {"strategy": "beam", "num_beams": 5, "max_new_tokens": 128}},
    "Unicorns: beam 5, no-repeat 2": {"prompt": UNICORN, "settings": {"strategy": "beam", "num_beams": 5, "no_repeat_ngram_size": 2, "max_new_tokens": 128}},
    "Unicorns: temperature 2.0": {"prompt": UNICORN, "settings": {"strategy": "sample", "temperature": 2.0, "top_k": 0, "max_new_tokens": 128, "seed": 42}},
    "Unicorns: temperature 0.5": {"prompt": UNICORN, "settings": {"strategy": "sample", "temperature": 0.5, "top_k": 0, "max_new_tokens": 128, "seed": 42}},
    "Unicorns: top-k 50": {"prompt": UNICORN, "settings": {"strategy": "sample", "top_k": 50, "max_new_tokens": 128, "seed": 42}},
    "Unicorns: top-p 0.90": {"prompt": UNICORN, "settings": {"strategy": "sample", "top_p": 0.90, "max_new_tokens": 128, "seed": 42}},
}

# Strategies compare mode offers by default (the book's comparison on the unicorn prompt).
COMPARE_DEFAULT: list[dict] = [
    {"strategy": "greedy", "max_new_tokens": 64},
    {"strategy": "beam", "num_beams": 4, "no_repeat_ngram_size": 2, "max_new_tokens": 64},
    {"strategy": "sample", "top_p": 0.9, "max_new_tokens": 64, "seed": 42},
]
