"""Decoding strategies made visible: one instrumented `model.generate` per run.

Model-level API (the role-level entry points a tab calls are in `api.py`):

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

import contextvars
import queue
import random
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    StoppingCriteriaList,
)
from transformers.generation.streamers import BaseStreamer

from backend.runtime import budget as budgets
from backend.engines.generation.beam_tree import BEAM_TREE_STEPS, beam_tree
from backend.engines.generation.prefill import PrefillStopped, prefilled, shape_of
from backend.runtime.memory_budget import check_generation
from backend.engines.generation.filters import cut_counts, cut_curve, entropy, softmax
from backend.engines.generation.presets import COMPARE_DEFAULT, PRESETS, UNICORN
from backend.engines.generation.record import BeamRecorder, StepRecorder, Tap
from backend.engines.generation.result import (
    DecodeResult,
    TokenText,
    output_summary,
    unscored_summary,
    rounded,
    steps_from_record,
    steps_from_scores,
)
from backend.engines.generation.settings import (
    MAX_NEW_TOKENS_CAP,
    STRATEGIES,
    DecodeSettings,
    check_prefill,
    parse_strategies,
)
from backend.runtime.errors import InputError
from backend.runtime.validation import as_float

# Re-exports included: the Pipelines backend, bench and tests import these from here.
__all__ = [
    "COMPARE_DEFAULT", "MAX_CONTEXT_TOKENS", "MAX_NEW_TOKENS_CAP", "PRESETS", "STRATEGIES", "UNICORN",
    "DecodeResult", "DecodeSettings", "StopCriterion", "build_processors", "build_prompt", "compare", "context_limit",
    "decode", "decode_stream", "generation_config", "parse_strategies", "score_sequence", "step_distribution",
]

from backend.engines.generation.setup import (  # noqa: E402  (re-exported: see __all__)
    MAX_CONTEXT_TOKENS,
    StopCriterion,
    _eos_ids,
    _QueueStreamer,
    _trim,
    build_processors,
    build_prompt,
    context_limit,
    early_finish,
    generation_config,
    stopping_criteria,
)


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


# ----------------------------------------------------------------------------- decode: wire, run, collect


@dataclass
class _Wired:
    """Everything one run needs before generate starts: the prompt, the config, the taps."""

    settings: DecodeSettings
    prompt_text: str
    prompt_ids: list[int]
    warnings: list[str]
    config: GenerationConfig
    eos: set[int]
    recorder: StepRecorder | BeamRecorder
    processors: LogitsProcessorList
    stops: StoppingCriteriaList | None
    streamer: BaseStreamer | None
    stop_event: threading.Event | None = None  # the Stop the prompt's chunked read also watches


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
    wired = _wire(model, tokenizer, prompt, settings, stop_event, streamer)
    sequences, gen_seconds = _generate(model, wired)
    return _collect(model, tokenizer, wired, sequences, gen_seconds, early_finish(stop_event), started)


def _wire(model, tokenizer, prompt: str, settings: DecodeSettings, stop_event: threading.Event | None,
          streamer: BaseStreamer | None) -> _Wired:
    """The prompt ids, a neutral generation config, and the processor chain with its taps."""
    prompt_text, prompt_ids, warnings = build_prompt(tokenizer, prompt, settings, context_limit(model))
    check_prefill(settings, len(prompt_ids))
    beam = settings.strategy == "beam"
    check_generation(shape_of(model), len(prompt_ids), settings.max_new_tokens,
                     settings.num_beams if beam else settings.num_return_sequences, beam, what="This decode")
    if settings.seed is None and settings.strategy == "sample":
        settings.seed = random.randrange(2**31)
    gen_config = generation_config(model, tokenizer, settings)
    eos = _eos_ids(gen_config)
    _, (plain, warp_t, warp_cut) = build_processors(settings, len(prompt_ids), eos, device=model.device)

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
    stops = stopping_criteria(stop_event)
    if streamer is not None and (beam or settings.num_return_sequences > 1):
        streamer = None
    return _Wired(settings, prompt_text, prompt_ids, warnings, gen_config, eos, recorder,
                  LogitsProcessorList(procs), stops, streamer, stop_event)


def _generate(model, wired: _Wired) -> tuple[torch.Tensor, float]:
    """Plain `model.generate` with the wired chain; -> (sequences, seconds it took)."""
    input_ids = torch.tensor([wired.prompt_ids], device=model.device)
    seed = wired.settings.seed
    if seed is not None:
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
    t0 = time.perf_counter()
    width = wired.config.num_beams if wired.config.num_beams > 1 else wired.config.num_return_sequences
    try:
        cache = prefilled(model, input_ids, width, wired.stop_event)
    except PrefillStopped:  # stopped while reading the prompt: no new token, the finish reason says why
        return input_ids.expand(wired.config.num_return_sequences, -1), time.perf_counter() - t0
    with torch.inference_mode():
        sequences = model.generate(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            past_key_values=cache,
            generation_config=wired.config,
            logits_processor=wired.processors,
            stopping_criteria=wired.stops,
            streamer=wired.streamer,
        )
    return sequences, time.perf_counter() - t0


def _collect(model, tokenizer, wired: _Wired, sequences: torch.Tensor, gen_seconds: float, early: str | None,
             started: float) -> DecodeResult:
    """The taps' record and the returned sequences -> outputs, step table, beam tree, timing."""
    settings = wired.settings
    tok = TokenText(tokenizer)
    rows = sequences[:, len(wired.prompt_ids):].cpu().tolist()
    if settings.strategy == "beam":
        outputs, steps, tree = _beam_outputs(model, tokenizer, wired, rows, tok)
    else:
        outputs, steps = _recorded_outputs(tokenizer, wired, sequences, rows, tok)
        tree = None

    first = outputs[0] if outputs else output_summary([], [], False, tok, tokenizer)
    n_new = first["n_tokens"]
    if early == "stopped" or (early and not first["ended_with_eos"] and n_new < settings.max_new_tokens):
        finish = early  # "stopped" (a cancel) or "time budget": the text so far
        if early == "time budget":
            wired.warnings.append(budgets.current().message(
                f"{n_new} of {settings.max_new_tokens} new tokens", "Ask for fewer new tokens or beams."))
        elif early == "memory budget":
            wired.warnings.append("Stopped: this process grew past the memory guard while the decode ran "
                                  "(TLAB_REQUEST_MEMORY_MB). Ask for fewer new tokens or beams.")
    elif first["ended_with_eos"]:
        finish = "eos"
    else:
        finish = "length"
    return DecodeResult(
        text=first["text"],
        prompt_text=wired.prompt_text,
        prompt_token_ids=wired.prompt_ids,
        outputs=outputs,
        steps=steps,
        sequence_logprob=first["logprob"],
        perplexity=first["perplexity"],
        distinct_2=first["distinct_2"],
        distinct_3=first["distinct_3"],
        n_new_tokens=n_new,
        generate_seconds=rounded(gen_seconds, 4),
        seconds=rounded(time.perf_counter() - started, 4),
        tokens_per_s=rounded(n_new / gen_seconds if gen_seconds > 0 else 0.0, 3),
        finish_reason=finish,
        settings=settings.to_dict(),
        label=settings.label(),
        beam_tree=tree,
        warnings=wired.warnings,
        truncated_prompt=any("truncated" in w for w in wired.warnings),
        record_bytes=int(getattr(wired.recorder, "peak_bytes", 0)),
    )


def _beam_outputs(model, tokenizer, wired: _Wired, rows: list[list[int]], tok: TokenText) -> tuple[list, list, dict]:
    """Beam outputs are scored by one forward pass each; the record only feeds the tree."""
    prompt_ids, plen = wired.prompt_ids, len(wired.prompt_ids)
    outputs: list[dict] = []
    steps: list[dict] = []
    trimmed = [_trim(r, wired.eos) for r in rows]
    unscored = 0
    for i, (ids, found) in enumerate(trimmed):
        if i > 0 and budgets.expired():  # scoring is the request's work too: stop with the budget
            outputs.append(unscored_summary(ids, found, tok, tokenizer))
            unscored += 1
            continue
        scored = score_sequence(model, prompt_ids + ids, plen, wired.settings.top_n)
        outputs.append(output_summary(ids, scored["logprob"], found, tok, tokenizer))
        if i == 0:
            steps = steps_from_scores(ids, scored, tok)
    if unscored:
        wired.warnings.append(f"{unscored} of {len(trimmed)} returned sequences were not scored: the request's time "
                              "budget ran out (their logprob and perplexity are null).")
    tree = beam_tree(wired.recorder.finalize(), trimmed[0][0] if trimmed else [], wired.eos, tok)
    return outputs, steps, tree


def _recorded_outputs(tokenizer, wired: _Wired, sequences: torch.Tensor, rows: list[list[int]],
                      tok: TokenText) -> tuple[list, list]:
    """Greedy and sampled outputs: log-probs and the step table come straight from the taps."""
    rec = wired.recorder.finalize(sequences, len(wired.prompt_ids))
    outputs: list[dict] = []
    steps: list[dict] = []
    for b, row in enumerate(rows):
        ids, found = _trim(row, wired.eos)
        ids = ids[: rec["steps"]]
        chosen = rec["chosen"][b][: len(ids)] if rec["steps"] else []
        outputs.append(output_summary(ids, [c[1] for c in chosen], found, tok, tokenizer))
        if b == 0:
            steps = steps_from_record(rec, 0, len(ids), tok, wired.settings.strategy == "sample")
    return outputs, steps


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

    # The worker runs in this request's context, so it sees the request's budget.
    worker = threading.Thread(target=contextvars.copy_context().run, args=(work,), name="decode", daemon=True)
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


def compare(model, tokenizer, prompt: str, strategies: Any, progress=None, model_for=None) -> list[dict]:
    """Run 2-4 strategies on one prompt; one summary row per strategy.

    `progress(i, n, label)` is called before each run, if given; `model_for(settings)`, if
    given, picks the model per strategy (its precision).
    """
    settings = parse_strategies(strategies)
    rows = []
    for i, s in enumerate(settings):
        if progress is not None:
            progress(i, len(settings), s.label())
        budgets.check(f"{i} of {len(settings)} strategies ran", "Compare fewer strategies, or fewer tokens or beams.")
        res = decode(model if model_for is None else model_for(s), tokenizer, prompt, s)
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
        t = as_float("temperature", t)
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
    tok = TokenText(tokenizer)
    per_t = []
    for t in temps:
        p = softmax(logits, t)
        left = cut_counts(logits, t, top_k, top_p)  # as generate's float32 warpers count them
        per_t.append({"temperature": t, "probs": [rounded(x) for x in p[order]], "entropy": rounded(entropy(p), 4),
                      "survivors_top_k": left["top_k"], "survivors_top_p": left["both"]})
    curve = cut_curve(logits, as_float("temperature", cumulative_temperature), top_p, top_k)
    return {
        "position": len(token_ids),
        "tokens": [tok(i) for i in order],
        "token_ids": [int(i) for i in order],
        "temperatures": per_t,
        "cumulative": {**curve, "top_p": top_p, "top_k": top_k, "temperature": cumulative_temperature},
        "vocab_size": int(logits.shape[0]),
    }
