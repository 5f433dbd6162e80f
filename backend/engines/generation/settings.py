"""One decoding strategy as plain values, and the rules that keep it runnable.

`DecodeSettings.validate` reads one table, `RULES`: each row coerces a field with the shared
readers (so "3", 3.0 and NaN are handled alike everywhere) and, for the strategies the field
matters to, checks it. A greedy run never fails on a sampling knob it does not use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple

from backend.runtime import json_input
from backend.runtime.errors import InputError
from backend.runtime.validation import as_bool, as_float, as_int, kind

STRATEGIES = ("greedy", "beam", "sample")
PRECISIONS = ("fp32", "int8")  # the served weights, or their dynamically quantized copy (backend.efficiency)
MAX_NEW_TOKENS_CAP = 512
MAX_BEAMS = 16
MAX_SAMPLES = 8
MAX_TOP_N = 20
MAX_COMPARE = 4
# /compare_decoding's total work: the sum over strategies of sequences x new tokens (beam: num_beams
# sequences; sampling: num_return_sequences). 4096 = e.g. four beam-4 runs of 256 tokens; four
# beam-16 runs of 512 tokens would be 32768, minutes of CPU.
MAX_COMPARE_WORK = 4096
# Token-rows a decode carries (prompt tokens x the sequences run side by side): every step of a
# beam search attends to all of them. 16 beams over a 1,536-token prompt (24,576) take 144 s on 2 cores
# before the first new token if the prompt is read per beam; it is read once, in chunks
# that Stop reaches (generation/prefill.py), and memory has its own estimate (runtime/memory_budget.py).
MAX_PREFILL_WORK = 4096
LENGTH_PENALTY_RANGE = (-10.0, 10.0)  # beam scores divide by length**penalty: 1e9 overflows

_ALIASES = {"greedy search": "greedy", "beam search": "beam", "sampling": "sample", "top-k": "sample",
            "top-p": "sample", "nucleus": "sample"}


def _read_strategy(name: str, value: Any) -> str:
    strategy = str(value or "").strip().lower()
    return _ALIASES.get(strategy, strategy)


def _read_seed(name: str, value: Any) -> int | None:
    """None or blank -> None (pick one at run time and report it)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return as_int(name, value, "a whole number (e.g. 42) or empty for a random one")


def _read_name(name: str, value: Any) -> str:
    return str(value or "")


def _read_precision(name: str, value: Any) -> str:
    return str(value or "fp32").strip().lower()


class Rule(NamedTuple):
    """Coerce `field` with `read`; for `strategies` (None: all), refuse a value where `ok` is false.

    `message` is formatted with v (the coerced value), raw (the value given) and s (the
    settings, for limits that depend on another field).
    """

    field: str
    read: Callable[[str, Any], Any]
    ok: Callable[[Any, "DecodeSettings"], bool] | None = None
    message: str = ""
    strategies: tuple[str, ...] | None = None


_TEMPERATURE_MESSAGE = (
    "temperature must be > 0 for sampling (got {v:g}): it divides the logits, and as it goes to 0 sampling turns "
    "into always taking the most likely token. For that, choose the 'greedy' strategy; otherwise use e.g. 0.7."
)
_LP_LO, _LP_HI = LENGTH_PENALTY_RANGE
MAX_TEMPERATURE = 100.0
MAX_TOP_K = 1_000_000

# Order matters: strategy first (later rows depend on it), max_new_tokens before min_new_tokens.
RULES: tuple[Rule, ...] = (
    Rule("strategy", _read_strategy, lambda v, s: v in STRATEGIES,
         f"Unknown strategy {{raw!r}}; choose one of: {', '.join(STRATEGIES)}."),
    Rule("max_new_tokens", as_int, lambda v, s: v >= 1, "max_new_tokens must be at least 1."),
    Rule("max_new_tokens", as_int, lambda v, s: v <= MAX_NEW_TOKENS_CAP,
         f"max_new_tokens is {{v}}, over the cap of {MAX_NEW_TOKENS_CAP}; ask for {MAX_NEW_TOKENS_CAP} or fewer."),
    # Each knob's domain is checked whatever the strategy (a script's typo must not pass just because
    # greedy ignores it), after the stricter rule of the strategy that uses it (its message explains more).
    Rule("temperature", as_float, lambda v, s: v > 0, _TEMPERATURE_MESSAGE, ("sample",)),
    Rule("temperature", as_float, lambda v, s: 0 <= v <= MAX_TEMPERATURE,
         f"temperature must be between 0 and {MAX_TEMPERATURE:g}, got {{v:g}}."),
    Rule("top_k", as_int, lambda v, s: 0 <= v <= MAX_TOP_K,
         "top_k must be 0 (no top-k cut) or a positive number of tokens, got {v}."),
    Rule("top_p", as_float, lambda v, s: 0 < v <= 1, "top_p must be in (0, 1] (1 = no cut), got {v:g}; try 0.9.",
         ("sample",)),
    Rule("top_p", as_float, lambda v, s: 0 <= v <= 1, "top_p must be between 0 and 1 (1 = no cut), got {v:g}."),
    Rule("num_beams", as_int, lambda v, s: 2 <= v <= MAX_BEAMS,
         f"num_beams must be between 2 and {MAX_BEAMS} for beam search, got {{v}}.", ("beam",)),
    Rule("num_beams", as_int, lambda v, s: 1 <= v <= MAX_BEAMS,
         f"num_beams must be between 1 and {MAX_BEAMS}, got {{v}}."),
    Rule("length_penalty", as_float, lambda v, s: _LP_LO <= v <= _LP_HI,
         f"length_penalty must be between {_LP_LO:g} and {_LP_HI:g} (1 = neutral, above 1 favours longer "
         "sequences), got {v:g}."),
    Rule("early_stopping", as_bool),
    Rule("num_return_sequences", as_int, lambda v, s: v >= 1, "num_return_sequences must be at least 1, got {v}."),
    Rule("num_return_sequences", as_int, lambda v, s: v <= s.num_beams,
         "num_return_sequences ({v}) cannot exceed num_beams ({s.num_beams}): beam search only has that many "
         "hypotheses. Raise num_beams or lower num_return_sequences.", ("beam",)),
    Rule("num_return_sequences", as_int, lambda v, s: v == 1,
         "Greedy search is deterministic, so it returns exactly one sequence (num_return_sequences={v}). "
         "Use beam or sample for several.", ("greedy",)),
    Rule("num_return_sequences", as_int, lambda v, s: v <= MAX_SAMPLES,
         f"num_return_sequences must be between 1 and {MAX_SAMPLES} for sampling, got {{v}}.", ("sample",)),
    Rule("no_repeat_ngram_size", as_int, lambda v, s: v >= 0,
         "no_repeat_ngram_size must be 0 (off) or a positive n-gram size, got {v}."),
    Rule("repetition_penalty", as_float, lambda v, s: v > 0,
         "repetition_penalty must be > 0 (1 = off, 1.2 is typical), got {v:g}."),
    Rule("seed", _read_seed, lambda v, s: v is None or 0 <= v < 2**63, "seed must be between 0 and 2**63-1, got {v}."),
    Rule("chat_template", as_bool),
    Rule("min_new_tokens", as_int, lambda v, s: 0 <= v <= s.max_new_tokens,
         "min_new_tokens must be between 0 and max_new_tokens ({s.max_new_tokens}), got {v}."),
    Rule("top_n", as_int, lambda v, s: 1 <= v <= MAX_TOP_N,
         f"top_n (candidates shown per step) must be between 1 and {MAX_TOP_N}, got {{v}}."),
    Rule("name", _read_name),
    Rule("precision", _read_precision, lambda v, s: v in PRECISIONS,
         f"precision must be one of {', '.join(PRECISIONS)} (int8: the dynamically quantized copy of the model), "
         "got {raw!r}."),
)


@dataclass
class DecodeSettings:
    """One decoding strategy, as plain values (what the UI widgets and the API JSON carry).

    Only the fields of the chosen `strategy` matter: temperature/top_k/top_p for `sample`;
    num_beams/length_penalty/early_stopping for `beam`. `num_return_sequences` > 1 needs beam
    (at most num_beams) or sample. `seed` None picks one and reports it, so any run can be
    repeated. `top_n`: candidates kept per step in the step table. `min_new_tokens`: EOS is
    blocked until that many tokens exist (benchmarks use it to force a length). `precision`:
    generate with the served weights ("fp32") or their int8 copy ("int8", dynamic quantization).
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
    precision: str = "fp32"

    @classmethod
    def from_dict(cls, data: dict | "DecodeSettings" | None) -> "DecodeSettings":
        """Settings from a JSON-like dict; unknown keys are an InputError (typos must not pass)."""
        if isinstance(data, DecodeSettings):
            return cls(**asdict(data)).validate()
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InputError(f"Strategy settings must be a JSON object like {{\"strategy\": \"greedy\"}}, got {kind(data)}.")
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
        if self.precision != "fp32":
            parts.append(self.precision)
        return " ".join(parts)

    def validate(self) -> "DecodeSettings":
        """Coerce types and check ranges in place (see `RULES`); raise InputError saying what to change."""
        for rule in RULES:
            raw = getattr(self, rule.field)
            value = rule.read(rule.field, raw)
            setattr(self, rule.field, value)
            applies = rule.strategies is None or self.strategy in rule.strategies
            if applies and rule.ok is not None and not rule.ok(value, self):
                raise InputError(rule.message.format(v=value, raw=raw, s=self))
        return self


def parse_settings(settings: Any) -> DecodeSettings:
    """One strategy from a dict, a DecodeSettings, None (defaults) or JSON text (the API's form)."""
    if isinstance(settings, str):
        try:
            settings = json_input.loads(settings, "settings") if settings.strip() else {}
        except json.JSONDecodeError as exc:
            raise InputError(f"settings is not valid JSON ({exc.msg}).") from None
    return DecodeSettings.from_dict(settings)


def parse_strategies(strategies: Any) -> list[DecodeSettings]:
    """A JSON list (string or list) of 2-4 strategy dicts -> validated settings."""
    if isinstance(strategies, str):
        text = strategies.strip()
        if not text:
            raise InputError('Give 2 to 4 strategies as a JSON list, e.g. [{"strategy": "greedy"}, {"strategy": "beam", "num_beams": 4}].')
        try:
            strategies = json_input.loads(text, "strategies")
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
    check_compare_work(out)
    return out


def work(s: DecodeSettings) -> int:
    """Token-steps one run costs: sequences decoded in parallel x new tokens."""
    width = s.num_beams if s.strategy == "beam" else s.num_return_sequences
    return width * s.max_new_tokens


def check_prefill(s: DecodeSettings, prompt_tokens: int) -> None:
    """Refuse, before any forward, a decode of more token-rows than one request may carry."""
    width = s.num_beams if s.strategy == "beam" else s.num_return_sequences
    if width * prompt_tokens > MAX_PREFILL_WORK:
        what = f"{width} beams" if s.strategy == "beam" else f"{width} samples"
        fits = max(1, MAX_PREFILL_WORK // prompt_tokens)
        raise InputError(
            f"The prompt is {prompt_tokens:,} tokens and {what} each carry it through every step "
            f"({width * prompt_tokens:,} token-rows), over this server's {MAX_PREFILL_WORK:,} per decode. "
            f"Use at most {fits} {'beams' if s.strategy == 'beam' else 'samples'} with this "
            f"prompt, or a prompt of at most {MAX_PREFILL_WORK // width:,} tokens.")


def check_compare_work(settings: list[DecodeSettings]) -> None:
    """Refuse a comparison whose total work (sum of sequences x new tokens) is over MAX_COMPARE_WORK."""
    total = sum(work(s) for s in settings)
    if total > MAX_COMPARE_WORK:
        parts = " + ".join(f"{work(s)}" for s in settings)
        raise InputError(
            f"These strategies ask for {total:,} token-steps in all ({parts}; beams or samples x max_new_tokens "
            f"per strategy), over the comparison's limit of {MAX_COMPARE_WORK:,}. Lower max_new_tokens or "
            "num_beams, or compare fewer strategies.")
