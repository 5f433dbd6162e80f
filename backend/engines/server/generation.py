"""Generation on an OpenAI-compatible generation server (vLLM; TGI, SGLang and llama.cpp's server
speak the same API), returning the same `DecodeResult` as in-process generation.

Why: one process generates one request at a time per lane; a server batches concurrent requests
(continuous batching) and can hold a model larger than this host. The app points the decoder
roles' *generation* at one with TLAB_GENERATION_URL; what needs the model's internals stays here.
The client is the `openai` package against `/v1/completions`, streamed (client.py).

Parity with the in-process path, so the tabs format either result unchanged:
- The prompt is built by the same `build_prompt` (chat template, left truncation) with the role's
  own tokenizer and sent as token ids, so tokenization cannot differ; the server's tokenizer is
  checked once against ours (a probe text's ids), and a mismatch runs in-process.
- Per-step probabilities come from `top_logprobs` (with `return_tokens_as_token_ids`, so every
  candidate is an exact id). vLLM's default logprobs mode is raw: before penalties, temperature
  and cuts, i.e. the model's own distribution, what the in-process "p" column shows; the sequence
  log-prob is the sum of the chosen tokens' raw log-probs, as in-process.
- What needs the whole distribution (entropy, the after-temperature and after-cut probabilities,
  the tokens left after a cut) the server does not return: those fields are None and a warning
  says so. The rank is exact within the returned candidates, None beyond them.
- What the server cannot do at all runs in-process, and `in_process_reason` says why in words the
  UI shows: beam search (its tree needs every pruned hypothesis), int8 weights, no-repeat n-grams,
  more candidates per step than the server returns.
- Timing is the wall time of the HTTP call the user waited for; the request's time budget and a
  Stop end the stream (closing the connection aborts the request in the server).

Server down or slow: the health check and the first answer wait at most
TLAB_GENERATION_TIMEOUT_S; `ServerUnavailable` carries the sentence the caller shows when it
falls back in-process.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import openai

from backend.engines.generation.result import DecodeResult, TokenText, output_summary, prob, rounded
from backend.engines.generation.settings import DecodeSettings, check_prefill
from backend.engines.generation.setup import build_prompt, early_finish
from backend.engines.server.client import (  # re-exported: the tabs import everything from here
    MAX_LOGPROBS,
    Server,
    ServerFailed,
    ServerUnavailable,
    FAILURES,
    TIMEOUTS,
    open_completion,
    read_timeout,
    failure_reason,
    status_text,
    check_tokenizer,
    configured_url,
    down_message,
    server,
    forget,
    in_process,
    last_known_up,
    mark_down,
    on_this_machine,
)
from backend.runtime import budget as budgets
from backend.runtime import config

__all__ = ["SERVER_ROLES", "MAX_LOGPROBS", "MODEL_BOX_NOTE", "Server", "ServerFailed", "ServerUnavailable", "check_tokenizer",
           "configured_url", "decode", "describe", "route", "server", "forget", "in_process", "in_process_reason",
           "last_known_up", "plan", "request_body", "stream"]

SERVER_ROLES = ("decoder", "text_generation")  # the roles whose generation a server may serve
_ID_PREFIX = "token_id:"


# ----------------------------------------------------------------------------- routing


def in_process_reason(settings: DecodeSettings, max_logprobs: int = MAX_LOGPROBS) -> str | None:
    """Why these settings must run in-process (None: the server can run them), in the UI's words."""
    if settings.strategy == "beam":
        return ("Beam search ran in-process: the server returns finished sequences only, not the beam tree with "
                "its pruned hypotheses that this tab draws.")
    if settings.precision != "fp32":
        return f"The {settings.precision} run ran in-process: it needs this process's quantized copy of the weights."
    if settings.no_repeat_ngram_size:
        return "No-repeat n-gram blocking ran in-process: OpenAI-compatible engines have no such sampling setting."
    if settings.top_n > max_logprobs:
        return (f"{settings.top_n} candidates per step ran in-process: the server returns at most {max_logprobs} "
                "(its max_logprobs).")
    return None


MODEL_BOX_NOTE = "A model chosen in the model box runs in-process; the generation server serves its own model."


def plan(role: str, settings: DecodeSettings, override: str | None = None) -> tuple[Server | None, str | None]:
    """(the server to use, or None; the note a result shows when a server exists but this ran in-process).

    No server configured: (None, None), nothing to say. Network only for a health check that is
    due (see `engine`)."""
    url = configured_url()
    if not url or role not in SERVER_ROLES:
        return None, None
    if (override or "").strip():
        return None, MODEL_BOX_NOTE
    reason = in_process_reason(settings)
    if reason:
        return None, reason
    try:
        eng = server(url)
    except ServerUnavailable as exc:
        return None, str(exc)
    reason = in_process_reason(settings, eng.max_logprobs)
    return (None, reason) if reason else (eng, None)


def route(role: str, settings: DecodeSettings, override: str | None, admitted) -> tuple[Server | None, str | None]:
    """`plan`'s answer for a request already planned: `admitted` (its `backend.runtime.plan.Plan`, made
    as the request joined the queue) says whether the server may run it, so that is not asked again;
    only the server itself is looked up (a health check when one is due) and its own limit on
    candidates per step checked. None (a call that did not come through the queue): `plan` now."""
    if admitted is None:
        return plan(role, settings, override)
    if not admitted.on_server or role not in SERVER_ROLES:
        return None, admitted.note
    try:
        eng = server()
    except ServerUnavailable as exc:
        return None, str(exc)
    reason = in_process_reason(settings, eng.max_logprobs)
    return (None, reason) if reason else (eng, None)


def describe(eng: Server, role: str, checkpoint: str, source: str, reason: str = "", note: str = "") -> dict:
    """The result's `model` (the badge's provenance) when the server generated: the role's own
    checkpoint when the server serves it under that name, else the server's model."""
    same = eng.model == checkpoint
    where = f"{'vLLM' if eng.kind == 'vllm' else 'OpenAI-compatible'} server at {eng.url}"
    return {"role": role, "checkpoint": eng.model, "source": source if same else "engine", "method": config.METHOD_MODEL,
            "device": where, "dtype": None, "reason": reason,
            "note": note if same else f"generated by the server's {eng.model}; prompts tokenized with {checkpoint}'s "
                                      "tokenizer (checked to match the server's)"}


# ----------------------------------------------------------------------------- one run


def request_body(eng: Server, prompt_ids: list[int], s: DecodeSettings, candidates: int | None = None) -> dict:
    """The `/v1/completions` request: every sampling knob spelled out, so neither the server's
    defaults nor the model's generation_config can change the strategy. `candidates`: top log-probs
    per step (default the server's most, so a step table's ranks are exact as far as possible)."""
    sample = s.strategy == "sample"
    body = {
        "model": eng.model,
        "prompt": list(prompt_ids),
        "max_tokens": s.max_new_tokens,
        "min_tokens": s.min_new_tokens,
        "n": s.num_return_sequences,
        "temperature": s.temperature if sample else 0.0,
        "top_p": s.top_p if sample else 1.0,
        "top_k": s.top_k if sample else 0,
        "min_p": 0.0,
        "repetition_penalty": s.repetition_penalty,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "logprobs": min(candidates or eng.max_logprobs, eng.max_logprobs),
        "return_tokens_as_token_ids": True,
        "skip_special_tokens": True,
        "stream": True,
    }
    if sample and s.seed is not None:
        body["seed"] = s.seed
    return body


@dataclass
class _Choice:
    ids: list
    logps: list
    tops: list  # per step: {token id: raw log-prob}
    finish: str | None = None


def _token_id(token: str) -> int:
    if not isinstance(token, str) or not token.startswith(_ID_PREFIX):
        raise ServerUnavailable("The generation server does not return token ids with its log-probs "
                                "(return_tokens_as_token_ids); this ran in-process.")
    return int(token[len(_ID_PREFIX):])


def _absorb(choices: dict[int, _Choice], chunk) -> None:
    """One streamed Completion chunk (openai's model, read as the server's JSON) into the choices so far."""
    chunk = chunk.to_dict() if hasattr(chunk, "to_dict") else chunk
    for c in chunk.get("choices") or []:
        ch = choices.setdefault(int(c.get("index", 0)), _Choice([], [], []))
        lp = c.get("logprobs") or {}
        for tok, logp, top in zip(lp.get("tokens") or [], lp.get("token_logprobs") or [], lp.get("top_logprobs") or []):
            ch.ids.append(_token_id(tok))
            ch.logps.append(float(logp) if logp is not None else float("-inf"))
            ch.tops.append({_token_id(k): float(v) for k, v in (top or {}).items()})
        if c.get("finish_reason"):
            ch.finish = c["finish_reason"]


def stream(eng: Server, tokenizer, prompt: str, settings: DecodeSettings | dict | None = None, *,
           stop_event: threading.Event | None = None, texts: bool = True,
           prepared: tuple[str, list[int], list[str]] | None = None,
           candidates: int | None = None) -> Iterator[tuple[str, DecodeResult | None]]:
    """Yield (text so far, None) per streamed token of the first output (unless `texts` is False),
    then (text, DecodeResult). `prepared`: (prompt text, its ids, warnings) built by the caller
    (a multi-turn chat prompt, `remote_chat`) instead of `build_prompt` from `prompt`; `candidates`:
    see `request_body` (a reply that needs no step table asks for 1: less for the server to send).

    Raises ServerUnavailable before the first yield when the server cannot run it (the caller runs
    it in-process), ServerFailed when the server stops answering after that. Closing the
    iterator (Stop) closes the connection, which aborts the request in the server.
    """
    s = DecodeSettings.from_dict(settings)
    started = time.perf_counter()
    prompt_text, prompt_ids, warnings = (
        (prepared[0], list(prepared[1]), list(prepared[2])) if prepared else build_prompt(tokenizer, prompt, s,
                                                                                          eng.context_limit()))
    check_prefill(s, len(prompt_ids))
    if s.seed is None and s.strategy == "sample":
        s.seed = random.randrange(2**31)
    unchecked = check_tokenizer(eng, tokenizer)
    if unchecked:
        warnings.append(unchecked)
    body = request_body(eng, prompt_ids, s, candidates)
    b = budgets.current()
    settings_ = config.get_settings()
    t0 = time.perf_counter()
    try:
        events = open_completion(eng.url, body, settings_.generation_timeout_s)
    except openai.APIStatusError as exc:
        raise ServerUnavailable(f"The generation server at {eng.url} refused the request "
                                f"({status_text(exc)}); this ran in-process.") from None
    except FAILURES as exc:
        msg = down_message(eng.url, failure_reason(exc))
        mark_down(eng.url, msg)
        raise ServerUnavailable(msg) from None
    choices: dict[int, _Choice] = {}
    early: str | None = None
    shown = 0
    tok = TokenText(tokenizer)
    try:  # while it streams, this app's jobs use one torch thread if the server shares these cores
        with budgets.local_server_generating(on_this_machine(eng.url)):
            for chunk in _reading(events, b):
                _absorb(choices, chunk)
                first = choices.get(0)
                while first is not None and len(first.ids) > shown and s.num_return_sequences == 1:
                    shown += 1  # one yield per token, as in-process: a chunk may carry several
                    if texts:  # `decode` wants only the result: no text per token to build
                        yield tokenizer.decode(first.ids[:shown], skip_special_tokens=True), None
                early = early_finish(stop_event)
                if early:
                    break
            if not early and (not choices or any(c.finish is None for c in choices.values())):
                raise ConnectionResetError("it closed the stream before its end")
    except TIMEOUTS:
        early = early_finish(stop_event) or ("time budget" if b is not None and b.expired() else None)
        if early is None:
            _fail(eng, shown, "it stopped answering within the time-out")
    except FAILURES as exc:
        _fail(eng, shown, failure_reason(exc))
    finally:
        events.close()
    gen_seconds = time.perf_counter() - t0
    res = _result(eng, tokenizer, tok, s, prompt_text, prompt_ids, warnings, choices, early, gen_seconds, started,
                  body["logprobs"])
    yield res.text, res


def _reading(events, b: budgets.Budget | None) -> Iterator:
    """The stream's chunks; each read waits at most the request's remaining budget (or 10 min)."""
    read_timeout(events, max(0.5, b.remaining()) if b is not None and b.remaining() < 600 else 600.0)
    yield from events


def _fail(eng: Server, shown: int, why: str) -> None:
    msg = down_message(eng.url, why)
    mark_down(eng.url, msg)
    if shown:
        raise ServerFailed(why, f"The generation server at {eng.url} stopped after {shown} tokens ({why}). Run it again: "
                           "while the server is down, generation runs in-process.")
    raise ServerUnavailable(msg)


def decode(eng: Server, tokenizer, prompt: str, settings: DecodeSettings | dict | None = None, *,
           stop_event: threading.Event | None = None,
           prepared: tuple[str, list[int], list[str]] | None = None, candidates: int | None = None) -> DecodeResult:
    """One run on the server (see `stream`); ServerUnavailable means: run it in-process (also when
    the server dies mid-run: nobody saw its first tokens)."""
    result = None
    try:
        for _, res in stream(eng, tokenizer, prompt, settings, stop_event=stop_event, texts=False, prepared=prepared,
                             candidates=candidates):
            result = res if res is not None else result
    except ServerFailed as exc:
        raise ServerUnavailable(down_message(eng.url, exc.why)) from None
    return result


MISSING_COLUMNS = ("The server returns its top {n} candidates per step, not the whole distribution: the entropy"
                   "{sampling} {are} blank, and a rank beyond {n} is unknown.")


def _result(eng: Server, tokenizer, tok: TokenText, s: DecodeSettings, prompt_text: str, prompt_ids: list[int],
            warnings: list[str], choices: dict[int, _Choice], early: str | None, gen_seconds: float,
            started: float, k: int) -> DecodeResult:
    """The streamed choices -> the in-process path's result shape."""
    sampling = s.strategy == "sample"
    outputs, steps = [], []
    for i in sorted(choices):
        ch = choices[i]
        found_eos = ch.finish == "stop" and bool(ch.ids) and ch.ids[-1] in set(tokenizer.all_special_ids)
        outputs.append(output_summary(ch.ids, ch.logps, found_eos, tok, tokenizer))
        if i == 0:
            steps = [_step(t, cid, lp, top, s.top_n, k, tok, sampling) for t, (cid, lp, top) in
                     enumerate(zip(ch.ids, ch.logps, ch.tops))]
    first = outputs[0] if outputs else output_summary([], [], False, tok, tokenizer)
    n_new = first["n_tokens"]
    if early == "stopped" or (early and not first["ended_with_eos"] and n_new < s.max_new_tokens):
        finish = early
        if early == "time budget":
            warnings.append(budgets.current().message(f"{n_new} of {s.max_new_tokens} new tokens",
                                                      "Ask for fewer new tokens."))
    elif first["ended_with_eos"]:
        finish = "eos"
    else:
        finish = "length"
    warnings.append(MISSING_COLUMNS.format(n=k, are="are" if sampling else "is",
                                           sampling=(", the after-temperature and after-cut probabilities and the "
                                                     "tokens left after the cut") if sampling else ""))
    if sampling:
        warnings.append(f"Sampled by the server with seed {s.seed}: the same seed repeats this text on the server, "
                        "not in-process (each uses its own random generator).")
    return DecodeResult(
        text=first["text"], prompt_text=prompt_text, prompt_token_ids=list(prompt_ids), outputs=outputs, steps=steps,
        sequence_logprob=first["logprob"], perplexity=first["perplexity"], distinct_2=first["distinct_2"],
        distinct_3=first["distinct_3"], n_new_tokens=n_new, generate_seconds=rounded(gen_seconds, 4),
        seconds=rounded(time.perf_counter() - started, 4),
        tokens_per_s=rounded(n_new / gen_seconds if gen_seconds > 0 else 0.0, 3), finish_reason=finish,
        settings=s.to_dict(), label=s.label(), beam_tree=None, warnings=warnings,
        truncated_prompt=any("truncated" in w for w in warnings), record_bytes=0)


def _step(t: int, cid: int, lp: float, top: dict[int, float], top_n: int, k: int, tok: TokenText,
          sampling: bool) -> dict:
    """One row of the step table from the server's candidates (raw log-probs): its top `k`, plus
    the chosen token when it is not among them, so its rank is exact only when fewer than `k` beat it."""
    ranked = sorted(top.items(), key=lambda kv: -kv[1])
    better = sum(1 for _, v in ranked if v > lp)
    step = {
        "step": t,
        "token_id": int(cid),
        "token": tok(cid),
        "logprob": rounded(lp),
        "prob": prob(lp),
        "rank": better + 1 if better < k else None,
        "entropy": None,
        "candidates": [{"token_id": int(i), "token": tok(i), "prob": prob(v)} for i, v in ranked[:top_n]],
    }
    if sampling:
        step.update(prob_temperature=None, prob_after_cut=None, entropy_temperature=None, survivors=None)
    return step
