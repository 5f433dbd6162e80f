"""Role-level entry points: what the Decoding tab and scripts call.

Each takes plain values and a role (default "decoder"), checks its input before any model
loads, asks the hub for the role's model inside the ZeroGPU-wrapped call, and returns plain
JSON-able data with `"model"`: which checkpoint served the result. The model-level functions
they call live in `generate` (unit tests drive those with tiny models).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from backend import hub
from backend.runtime import budget as budgets
from backend.runtime.device import gpu_task
from backend.engines.generation import generate
from backend.engines.server import generation as remote
from backend.decoding import attention_growth as growth
from backend.decoding import by_hand
from backend.decoding import precision as precisions
from backend.engines.generation.settings import PRECISIONS, parse_settings, parse_strategies
from backend.runtime.errors import InputError, ModelLoadError
from backend.runtime.plan import Plan
from backend.runtime import config
from backend.runtime.validation import as_bool, as_float, as_int, check_text, one_of, opt_text

ROLE = "decoder"


def _load(role: str, model: str | None, progress: Progress):
    """The role's model, or the model box's; a model-box refusal names the box."""
    try:
        return hub.load(role, model, progress=progress)
    except ModelLoadError as exc:
        if model and not str(exc).startswith("model"):
            raise ModelLoadError(f"model (the model box): {exc}", role=role) from None
        raise


def _box(model) -> str | None:
    """The model box: a Hub id, a folder, or a model this session trained (hub.session_models); None
    for the role's own model."""
    return opt_text("model", model, max_chars=config.MAX_OVERRIDE_CHARS) or None

Progress = Callable[[float, str], Any] | None


@gpu_task(duration=120)
def decode(prompt: str, settings: dict | str | None = None, role: str = ROLE, progress: Progress = None,
           model: str | None = None, plan: Plan | None = None) -> dict:
    """One generation: text, tokens, per-step candidates, sequence log-prob, timing, model.

    settings: a dict of `DecodeSettings` keys, its JSON text, or None (greedy, 64 tokens).
    With `"precision": "int8"` the int8 copy generates, and each step also carries the fp32
    model's probability of the chosen token (`prob_fp32`, `prob_int8`; see `precision`).
    With TLAB_GENERATION_URL, greedy and sampling runs go to that server; `"engine"` says where
    the run went (`{"kind": "vllm", "url", "model"}`, or `{"kind": "in-process", "note": why}`).
    `plan`: where it runs, as `plan(settings, model)` decided when the request was admitted.
    """
    s = parse_settings(settings)
    check_text(prompt, "prompt")
    model = _box(model)
    eng, note = remote.route(role, s, model, plan)
    if eng is not None:
        tokenizer, described = _server_side(eng, role)
        try:
            return _server_payload(remote.decode(eng, tokenizer, prompt, s), eng, described)
        except remote.ServerUnavailable as exc:
            note = str(exc)
    lm = _load(role, model, progress)
    served = precisions.serve(lm, s.precision, progress)
    data = generate.decode(served.model, lm.tokenizer, prompt, s).to_dict()
    return _in_process(precisions.add_other(data, served), note)


LONG_DECODE_TOKENS = 64  # a greedy / sampled decode of this many new tokens or more is long work here


def plan(settings, model: str | None = None) -> Plan:
    """Where one decode runs and whether it is long work here, decided once as the request joins the
    queue (no network, no model: the server's last health check only). Long: 64+ new tokens, beams
    or several samples, unless the server does it. Settings the handler will refuse raise LabError."""
    s = parse_settings(settings)
    long_here = s.max_new_tokens >= LONG_DECODE_TOKENS or s.strategy == "beam" or s.num_return_sequences > 1
    if not remote.configured_url():
        return Plan(long=long_here)
    if (model or "").strip():
        return Plan(long=long_here, note=remote.MODEL_BOX_NOTE)
    reason = remote.in_process_reason(s)
    if reason:  # beams, n-gram blocking...: here, and the result says why
        return Plan(long=long_here, note=reason)
    # The server may run it; a server last seen down is asked again when due (remote.route), and the
    # work is long here meanwhile, as it may run here.
    return Plan(on_server=True, long=long_here and not remote.last_known_up())


def _server_side(eng: remote.Server, role: str) -> tuple:
    """The role's tokenizer (no weights: the server generates) and the result's provenance."""
    tokenizer, r = hub.tokenizer(role)
    return tokenizer, remote.describe(eng, role, r.checkpoint, r.source, r.reason, r.note)


def _server_payload(result, eng: remote.Server, described: dict) -> dict:
    """A server's DecodeResult as the `/decode` payload: where it ran, and what ran here after."""
    data = result.to_dict()
    data["model"] = described
    data["engine"] = eng.info()
    data["precision"] = {"generated": "as the server serves it", "other": None}
    if described.get("source") == "engine":
        data["warnings"].append(f"The distribution plots are computed in this process by its own model, not by the "
                                f"server's {eng.model}.")
    return data


def _in_process(data: dict, note: str | None) -> dict:
    """Say that a result ran in this process, and why when a server exists."""
    data["engine"] = remote.in_process(note)
    if note:
        data.setdefault("warnings", []).insert(0, note)
    return data


@gpu_task(duration=120)
def decode_stream(prompt: str, settings: dict | str | None = None, role: str = ROLE,
                  progress: Progress = None, model: str | None = None,
                  plan: Plan | None = None) -> Iterator[tuple[str, dict | None]]:
    """Yield (text so far, None) as tokens arrive, then (final text, the `decode` payload).

    Beam search and several return sequences yield only the final pair. Closing the generator
    (the UI's Stop) stops generation; the model is free again when `close()` returns. `plan`: as `decode`'s.
    """
    s = parse_settings(settings)
    check_text(prompt, "prompt")
    model = _box(model)
    eng, note = remote.route(role, s, model, plan)
    if eng is not None:
        tokenizer, described = _server_side(eng, role)
        try:  # a server that fails before its first token: in-process; after it: ServerFailed, readable
            with contextlib.closing(remote.stream(eng, tokenizer, prompt, s)) as stream:
                for text, result in stream:
                    yield text, (None if result is None else _server_payload(result, eng, described))
            return
        except remote.ServerUnavailable as exc:
            note = str(exc)
    lm = _load(role, model, progress)
    served = precisions.serve(lm, s.precision, progress)
    with contextlib.closing(generate.decode_stream(served.model, lm.tokenizer, prompt, s)) as stream:
        for text, result in stream:
            if result is None:
                yield text, None
            else:
                yield text, _in_process(precisions.add_other(result.to_dict(), served), note)


@gpu_task(duration=180)
def compare(prompt: str, strategies: list | str, role: str = ROLE, progress: Progress = None,
            model: str | None = None) -> dict:
    """2-4 strategies (settings dicts, or their JSON list) on one prompt, side by side.

    Returns {"prompt", "rows": one per strategy (text, sequence_logprob, perplexity,
    distinct_2/3, n_new_tokens, tokens_per_s, settings, engine, ...), "model", "engine"}. Each
    strategy the generation server can run goes there (see `remote_generation.plan`).
    """
    settings = parse_strategies(strategies)
    check_text(prompt, "prompt")
    model = _box(model)
    plans = [remote.plan(role, s, model) for s in settings]
    lm = _load(role, model, progress) if any(eng is None for eng, _ in plans) else None

    def tick(i: int, n: int, label: str) -> None:
        if progress is not None:
            progress(i / n, f"running {label}")

    served: dict[str, precisions.Served] = {}

    def model_for(s) -> object:  # an int8 strategy quantizes (or reuses the cached copy) when its turn comes
        if s.precision not in served:
            served[s.precision] = precisions.serve(lm, s.precision)
        return served[s.precision].model

    if not any(eng is not None for eng, _ in plans):
        rows = generate.compare(lm.model, lm.tokenizer, prompt, settings, progress=tick, model_for=model_for)
        note = next((n for _, n in plans if n), None)
        for row, (_, n) in zip(rows, plans):
            if remote.configured_url():  # with no server there is nothing to say per row
                row["engine"] = remote.in_process(n)
            if n:
                row["warnings"].insert(0, n)
        return {"prompt": prompt, "rows": rows, "model": lm.describe(), "engine": remote.in_process(note)}
    rows, described = [], None
    for i, (s, (eng, note)) in enumerate(zip(settings, plans)):
        tick(i, len(settings), s.label())
        budgets.check(f"{i} of {len(settings)} strategies ran", "Compare fewer strategies, or fewer tokens or beams.")
        res = None
        if eng is not None:
            tokenizer, described = _server_side(eng, role)
            try:
                res, where = remote.decode(eng, tokenizer, prompt, s), eng.info()
            except remote.ServerUnavailable as exc:
                note = str(exc)
        if res is None:
            lm = lm or _load(role, model, progress)
            res, where = generate.decode(model_for(s), lm.tokenizer, prompt, s), remote.in_process(note)
            if note:
                res.warnings.insert(0, note)
        rows.append(_compare_row(res, where))
    kinds = {r["engine"]["kind"] for r in rows}
    model = lm.describe() if lm is not None and "in-process" in kinds else described  # mixed: each row's server says
    server_info = rows[0]["engine"] if len(kinds) == 1 else {"kind": "mixed", "per_row": [r["engine"] for r in rows]}
    return {"prompt": prompt, "rows": rows, "model": model, "engine": server_info}


def _compare_row(res, where: dict) -> dict:
    """One strategy's row, as `generate.compare` builds it, plus where it ran."""
    return {"strategy": res.label, "text": res.text, "sequence_logprob": res.sequence_logprob,
            "perplexity": res.perplexity, "distinct_2": res.distinct_2, "distinct_3": res.distinct_3,
            "n_new_tokens": res.n_new_tokens, "tokens_per_s": res.tokens_per_s, "seconds": res.generate_seconds,
            "finish_reason": res.finish_reason, "settings": res.settings, "warnings": res.warnings, "engine": where}


@gpu_task(duration=60)
def step_distribution(token_ids: Sequence[int], temperatures: Sequence[float] = (0.5, 1.0, 2.0), top_p: float = 0.9,
                      temperature: float = 1.0, step: int | None = None, top_k: int = 0, precision: str = "fp32",
                      role: str = ROLE, progress: Progress = None, model: str | None = None) -> dict:
    """The next-token distribution after `token_ids`: the data behind the tab's two plots.

    Top tokens' probabilities at each of `temperatures`, and the cumulative curve at
    `temperature` after `top_k` with where `top_p` cuts it (top_p 1: no cut), under the
    `precision` the run used. `step` (which generated token the context precedes) is passed
    through for the plot's title.
    """
    ids = [as_int("token_ids", i) for i in (token_ids if token_ids is not None else ())]
    top_p = as_float("top_p", top_p)
    temperature = as_float("temperature", temperature)
    top_k = as_int("top_k", top_k, lo=0)
    precision_name = one_of("precision", precision, PRECISIONS, default="fp32")
    model = _box(model)
    lm = _load(role, model, progress)
    model = precisions.serve(lm, precision_name).model
    dist = generate.step_distribution(model, lm.tokenizer, ids, temperatures=temperatures, top_p=top_p,
                                      top_k=top_k, cumulative_temperature=temperature)
    dist["step"] = step
    dist["model"] = lm.describe()
    return dist


@gpu_task(duration=60)
def decode_by_hand(prompt: str, path: Any = None, top_k: Any = 10, action: Any = "step", n: Any = 8,
                   seed: Any = None, chat_template: Any = False, role: str = ROLE, progress: Progress = None,
                   model: str | None = None) -> dict:
    """Decode by hand: the path so far (token ids or single-token strings), optionally continued
    greedily or by sampling for `n` tokens, scored by one teacher-forced forward: each token's
    log-prob and rank, the path's log-prob next to greedy's for as many tokens, where the path
    left the top-k, and the next token's top-k candidates. See `by_hand`."""
    by_hand.check_request(top_k, action, n, seed)
    check_text(prompt, "prompt")
    model = _box(model)
    chat = as_bool("chat_template", chat_template)
    if isinstance(path, (list, tuple)) and len(path) > by_hand.MAX_PATH:  # before the model loads
        raise InputError(f"path has {len(path)} tokens; decode by hand takes at most {by_hand.MAX_PATH}.")
    lm = _load(role, model, progress)
    out = by_hand.by_hand(lm.model, lm.tokenizer, prompt, path, top_k, action, n, seed, chat_template=chat)
    out["model"] = lm.describe()
    return out


@gpu_task(duration=60)
def generation_attention(prompt: str, n: Any = 16, layer: Any = -1, head: Any = None, path: Any = None,
                     chat_template: Any = False, role: str = ROLE, progress: Progress = None,
                     model: str | None = None) -> dict:
    """Attention while generating: greedy for `n` tokens (or the given `path`), and each new
    token's attention row over everything before it at `layer` for `head` (None / -1 / "mean":
    the mean over heads). See `attention_growth`."""
    growth.check_request(n, layer, head)
    check_text(prompt, "prompt")
    model = _box(model)
    chat = as_bool("chat_template", chat_template)
    if isinstance(path, (list, tuple)) and len(path) > by_hand.MAX_PATH:
        raise InputError(f"path has {len(path)} tokens; at most {by_hand.MAX_PATH}.")
    lm = _load(role, model, progress)
    out = growth.attention_growth(lm.model, lm.tokenizer, prompt, n, layer, head, path, chat_template=chat)
    out["model"] = lm.describe()
    return out
