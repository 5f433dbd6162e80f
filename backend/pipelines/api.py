"""The Pipelines tasks by role: what the tab and scripts call, one entry point per api_name.

Each entry point takes the widgets' plain values, reads its numbers and flags first (so a typo
is refused before any model loads), asks the hub for the task's role (`config.TASK_ROLES`, or
the model box's override), and hands the loaded model to the model-level runner in `tasks`
(which unit tests call with tiny models). The result is the runner's JSON-able dict,
`"model": <provenance>` included.
"""

from __future__ import annotations

import functools
import inspect
import time
from contextlib import closing
from pathlib import Path

from backend.runtime import config
from backend import hub
from backend.hub import server_models, session_models
from backend.runtime.device import gpu_task
from backend.pipelines import answer_strength, multilingual_ner, summary_checks, tasks
from backend.pipelines.encoders import MAX_TOP_K
from backend.engines.classify.similarity import DEFAULT_TEMPLATE, SENTIMENT_DEFAULT, parse_label_descriptions
from backend.engines.server import generation as remote
from backend.engines.generation.settings import parse_settings
from backend.engines.tasks.text import split_lines
from backend.pipelines.encoders import AGGREGATIONS
from backend.pipelines.seq2seq import LANGUAGE_NAMES
from backend.runtime.errors import InputError, LabError
from backend.runtime.plan import Plan
from backend.runtime.validation import as_bool, as_int, check_template, check_text, one_of, opt_text

STRATEGIES = ("greedy", "sample", "beam")


def _load(task: str, override: str | None, progress) -> tuple:
    """(the task's model, what the request waited for): a first use's load, conversion or
    training is timed and named, e.g. [{"for": "loading the sentiment model (first use: ...)",
    "seconds": 91.2}]; a model already in memory adds nothing. `task` is a task or a role."""
    override = opt_text("model_box", override, max_chars=config.MAX_OVERRIDE_CHARS)
    role = config.TASK_ROLES.get(task, task)
    reason = _first_use(role, override)
    start = time.perf_counter()
    lm = hub.load(role, override, progress)
    waited = [] if reason is None else [{"for": reason, "seconds": round(time.perf_counter() - start, 2)}]
    if progress is not None:
        progress(0.4, "Running")
    return lm, waited


def _first_use(role: str, override: str | None) -> str | None:
    """What loading `role` will wait for, in words; None when it is in memory already."""
    h = hub.get_hub()
    if h.is_loaded(role, override):
        return None
    what = f"loading the {role} model (first use"
    try:
        r = h.resolve(role, override)
    except LabError:
        return what + ")"
    if r.method == config.METHOD_FINETUNED:
        from backend.hub import builders

        builder = builders.BUILDERS[r.role]
        trained = builder.cache_dir(r.location).is_dir()
        return what + (f": reading {builder.what} trained here before)" if trained
                       else f": training {builder.what}, once)")
    if r.gguf_file:
        from backend.hub.conversion import converted_dir

        converted = converted_dir(Path(r.location) / r.gguf_file).is_dir()
        return what + (": reading its converted weights)" if converted
                       else ": converting the GGUF file to safetensors, once)")
    return what + (": downloading it from the Hub)" if r.source == "hub" else ": reading its weights)")


def _timed(fn):
    """The outermost wrapper of an entry point: the result's `seconds` is the wall time of the
    whole request from here, a first use's load included (`waited` names it and its part).
    A stream's last item carries the result."""

    def total(r, start):
        if isinstance(r, dict):
            r["seconds"] = round(time.perf_counter() - start, 4)
            r.setdefault("waited", [])
        return r

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def stream(*args, **kwargs):
            start = time.perf_counter()
            inner = fn(*args, **kwargs)
            try:
                for item in inner:
                    if isinstance(item, tuple) and item and isinstance(item[-1], dict):
                        total(item[-1], start)
                    yield item
            finally:
                inner.close()  # a Stop closes this stream: close the generation at once, not when collected

        return stream

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        return total(fn(*args, **kwargs), start)

    return timed


def _with_waits(r: dict, waited: list) -> dict:
    r["waited"] = waited
    return r


def _texts(text, batch) -> list[str]:
    """Batch mode: one text per line; else the whole box is one text. A list is taken as is."""
    if isinstance(text, (list, tuple)):
        return [check_text(t) for t in text]
    if not as_bool("batch", batch):
        return [check_text(text)]
    return split_lines(check_text(text))


def _seq2seq_settings(max_new_tokens, min_new_tokens=0, num_beams=0) -> dict:
    """The length and beam widgets -> generate() settings; 0 leaves the checkpoint's default."""
    settings = {"max_new_tokens": as_int("max_new_tokens", max_new_tokens, lo=1, hi=tasks.MAX_NEW_TOKENS)}
    min_new = as_int("min_new_tokens", min_new_tokens, lo=0, hi=tasks.MAX_NEW_TOKENS)
    beams = as_int("num_beams", num_beams, lo=0, hi=tasks.MAX_BEAMS)
    if min_new:
        settings["min_new_tokens"] = min_new
    if beams:
        settings["num_beams"] = beams
    return settings


@_timed
def classify(text, batch: bool = False, label_descriptions: str | None = None,
             session_id: str | None = None, override: str | None = None, progress=None) -> dict:
    """Sentiment of one text (or one per line in batch mode).

    `label_descriptions` (`LABEL: description` lines) steer the embedding-similarity method;
    empty means the sentiment defaults. A dedicated classifier has its own labels: it ignores
    them, and says so unless they are the untouched defaults. A session that chose "Use in
    Pipelines" in the Train tab (and left the model box empty) gets its own trained classifier.
    """
    texts = _texts(text, batch)
    raw = check_text(label_descriptions, "label_descriptions")
    desc = parse_label_descriptions(raw) if raw else None
    if session_id and not opt_text("model_box", override, max_chars=config.MAX_OVERRIDE_CHARS):
        mine = session_models.serve("sentiment", session_id, texts, label_notice=bool(raw) and raw != SENTIMENT_DEFAULT)
        if mine is not None:
            return mine
    return _classify(texts, raw, desc, override, progress)


@gpu_task(duration=60)
def _classify(texts: list[str], raw: str, desc, override, progress) -> dict:
    """The profile's (or the model box's) classifier; the offline one, fine-tuned here, is
    served as a sequence classifier and labelled with its own method."""
    lm, waited = _load("classify", override, progress)
    if lm.method != config.METHOD_EMBEDDING and raw == SENTIMENT_DEFAULT:
        desc = None  # the default descriptions only matter for the embedding method
    if lm.method != config.METHOD_FINETUNED:
        return _with_waits(tasks.classify(lm, texts, label_descriptions=desc), waited)
    from dataclasses import replace

    r = tasks.classify(replace(lm, method=config.METHOD_MODEL), texts, label_descriptions=desc)
    r.update(model=lm.describe(), method=lm.method,
             scoring="softmax over the logits of a linear head on the fine-tuned encoder's mean-pooled hidden states")
    return _with_waits(r, waited)


@_timed
@gpu_task(duration=60)
def zero_shot(text, labels, multi_label: bool = False, template: str = DEFAULT_TEMPLATE, batch: bool = False,
              override: str | None = None, progress=None) -> dict:
    """Scores of comma-separated candidate `labels` for one text (or one per line)."""
    texts = _texts(text, batch)
    multi_label = as_bool("multi_label", multi_label)
    labels = labels if isinstance(labels, (list, tuple)) else check_text(labels, "labels")
    template = check_template("template", template, DEFAULT_TEMPLATE)
    lm, waited = _load("zero_shot", override, progress)
    return _with_waits(tasks.zero_shot(lm, texts, labels, multi_label=multi_label, template=template), waited)


@_timed
@gpu_task(duration=120)
def ner(text, aggregation: str = "simple", batch: bool = False, override: str | None = None,
        progress=None) -> dict:
    """Named entities with character offsets, per text."""
    texts = _texts(text, batch)
    aggregation = one_of("aggregation", aggregation, AGGREGATIONS, default="simple")
    if isinstance(override, str) and override.strip().lower() in multilingual_ner.NAMES:
        base, waited = _load("multilingual", None, progress)
        return _with_waits(multilingual_ner.tag(base, texts, multilingual_ner.NAMES[override.strip().lower()],
                                                   aggregation), waited)
    lm, waited = _load("ner", override, progress)
    return _with_waits(tasks.ner(lm, texts, aggregation=aggregation), waited)


@_timed
@gpu_task(duration=60)
def qa(context, question, top_n=3, qa_method: str = "profile", override: str | None = None, progress=None) -> dict:
    """The answer to `question` in `context`, with up to `top_n` alternative spans. `qa_method`: the
    profile's QA model ("profile"), or, for comparison, the reader trained here ("reader") or the
    instruct decoder's copy-only span decoding ("span-decoding"); a model-box model overrides it. The
    model box also takes a method's name ("reader", "span-decoding"), so the tab reaches both."""
    top_n = as_int("top_n", top_n, lo=1, hi=tasks.MAX_TOP_N)
    context, question = check_text(context, "context"), check_text(question, "question")
    qa_method = one_of("qa_method", qa_method, QA_METHODS, default="profile")
    if isinstance(override, str) and override.strip().lower() in QA_METHODS[1:]:
        qa_method, override = override.strip().lower(), None
    lm, waited = _qa_model(override, qa_method, progress)
    rank = None
    if lm.method == config.METHOD_SPAN:  # the decoder reads only the sentences the embedder ranks first
        from backend.engines.qa import span_qa

        emb, more = _load("embedder", None, progress)
        waited = waited + more
        rank = span_qa.embedding_rank(emb.model, emb.tokenizer)
    r = tasks.qa(lm, question, context, top_n=top_n, rank=rank)
    r["strength"] = answer_strength.judge(r)  # a weak answer is said to be weak, with the threshold chosen
    return _with_waits(r, waited)


QA_METHODS = ("profile", "reader", "span-decoding")


def _qa_model(override, qa_method: str, progress) -> tuple:
    """The QA model for `qa_method`: the role's own, or the other local method for comparison."""
    if qa_method == "profile" or (override or "").strip():
        return _load("qa", override, progress)
    want = config.METHOD_FINETUNED if qa_method == "reader" else config.METHOD_SPAN
    if hub.get_hub().resolve("qa").method == want:
        return _load("qa", None, progress)
    if qa_method == "reader":
        raise InputError("The reader trained here serves the local profile's QA role; this app's QA role is "
                         f"{hub.get_hub().resolve('qa').checkpoint}. Use qa_method='profile'.")
    if hub.get_hub().resolve("decoder").checkpoint != config.SMOLLM2["checkpoint"]:
        raise InputError("Copy-only span decoding needs the local profile's instruct decoder. Use qa_method='profile'.")
    from dataclasses import replace

    lm, waited = _load("decoder", None, progress)  # the instruct decoder, scored as copy-only span decoding
    return replace(lm, role="qa", method=config.METHOD_SPAN, note=config.method_text(config.METHOD_SPAN, "QA")), waited


@_timed
@gpu_task(duration=120)
def summarize(text, max_new_tokens=60, min_new_tokens=10, num_beams=0, reference: str | None = None,
              override: str | None = None, progress=None, plan: Plan | None = None) -> dict:
    """A summary; ROUGE against `reference` when one is given. num_beams 0: the checkpoint's default.
    `plan`: where it runs, as `plan("summarize", ...)` decided when the request was admitted."""
    settings = _seq2seq_settings(max_new_tokens, min_new_tokens, num_beams)
    text, reference = check_text(text), check_text(reference, "reference")
    r = _instruct_task("summarize", override, settings, progress,
                       lambda lm: tasks.summarize(lm, text, settings, reference=reference), plan)
    return summary_checks.run(r, text, reference, settings, lambda role: _summary_model(role, progress, r))


def _summary_model(role: str, progress, r: dict):
    """The NER or embedder role's model for the summary checks (its wait added to `r`), or None
    when it would be the instruct decoder (too slow for a check) or would train on this click."""
    resolved = hub.get_hub().resolve(role)
    if resolved.method == config.METHOD_INSTRUCT:
        return None
    if resolved.method == config.METHOD_FINETUNED and not hub.get_hub().is_loaded(role):
        from backend.hub import builders

        if not builders.BUILDERS[role].cache_dir(resolved.location).is_dir():
            return None  # built by the set-up, never on a visitor's click
    lm, waited = _load(role, None, progress)
    r["waited"] = r.get("waited", []) + waited
    return lm


@_timed
@gpu_task(duration=120)
def translate(text, source: str = "en", target: str = "de", max_new_tokens=120, num_beams=0,
              reference: str | None = None, override: str | None = None, progress=None,
              plan: Plan | None = None) -> dict:
    """A translation; BLEU against `reference` when one is given. num_beams 0: the checkpoint's default.
    `plan`: where it runs, as `plan("translate", ...)` decided when the request was admitted."""
    settings = _seq2seq_settings(max_new_tokens, 0, num_beams)
    text, reference = check_text(text), check_text(reference, "reference")
    source = one_of("source", source, LANGUAGE_NAMES, default="en")
    target = one_of("target", target, LANGUAGE_NAMES, default="de")
    return _instruct_task("translate", override, settings, progress,
                          lambda lm: tasks.translate(lm, text, source, target, settings, reference=reference), plan)


def _instruct_task(task: str, override: str | None, settings: dict, progress, run, plan: Plan | None = None) -> dict:
    """`run(lm)` on the generation server when it may write this role's replies (an instruct
    fallback: `server_models.server_model`), else, or when the server fails before its reply,
    with the role's model loaded here; the result's `engine` says which, and why, and its `settings` what
    generate was asked for (a model's own run may name more)."""
    stand_in, note = server_models.server_model(config.TASK_ROLES[task], override, settings, plan=plan)
    if stand_in is not None:
        try:
            r = run(stand_in)
            r.setdefault("settings", dict(settings))
            r["engine"] = stand_in.server.info()
            r["waited"] = []
            return r
        except remote.ServerUnavailable as exc:
            note = str(exc)
    lm, waited = _load(task, override, progress)
    r = run(lm)
    r.setdefault("settings", dict(settings))
    return _with_waits(_in_process(r, note), waited)


@_timed
@gpu_task(duration=60)
def fill_mask(text, top_k=5, override: str | None = None, progress=None) -> dict:
    """The `top_k` likeliest words for the one [MASK] (or <mask>) in `text`. Offline the decoder
    serves it: candidates from the left context, reranked by whole-sentence likelihood."""
    top_k = as_int("top_k", top_k, lo=1, hi=MAX_TOP_K)
    text = check_text(text)
    lm, waited = _load("fill_mask", override, progress)
    return _with_waits(tasks.fill_mask(lm, text, top_k=top_k), waited)


@_timed
@gpu_task(duration=120)
def generate_text(prompt, strategy: str = "greedy", max_new_tokens=48, temperature=0.7, top_k=50, top_p=0.9,
                  num_beams=4, seed=0, override: str | None = None, progress=None, plan: Plan | None = None) -> dict:
    """Continue `prompt` with the Decoding tab's backend (which checks the strategy's numbers).

    `seed` None or empty: a random one, reported in the result. `plan`: where it runs, as
    `plan("generate_text", ...)` decided when the request was admitted.
    """
    prompt, settings = _generation(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed)
    eng, note = remote.route("text_generation", parse_settings(settings), override, plan)
    if eng is not None:
        try:
            tokenizer, described = _server_side(eng)
            return _on_server(eng, described, prompt, remote.decode(eng, tokenizer, prompt, settings))
        except remote.ServerUnavailable as exc:
            note = str(exc)
    lm, waited = _load("generate_text", override, progress)
    return _with_waits(_in_process(tasks.generate_text(lm, prompt, settings), note), waited)


@_timed
@gpu_task(duration=120)
def generate_text_stream(prompt, strategy: str = "greedy", max_new_tokens=48, temperature=0.7, top_k=50,
                         top_p=0.9, num_beams=4, seed=0, override: str | None = None, progress=None,
                         plan: Plan | None = None):
    """`generate_text`, streamed: yields (completion so far, tokens so far, None) as tokens
    arrive, then (completion, tokens, the `generate_text` result). Closing it stops generation."""
    prompt, settings = _generation(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed)
    eng, note = remote.route("text_generation", parse_settings(settings), override, plan)
    if eng is not None:
        n = 0
        try:  # the server's own stream (`stream: true`); a failure before the first token runs in-process
            tokenizer, described = _server_side(eng)
            with closing(remote.stream(eng, tokenizer, prompt, settings)) as stream:
                for text, res in stream:
                    if res is None:
                        n += 1
                        yield text, n, None
                    else:
                        r = _on_server(eng, described, prompt, res)
                        yield r["completion"], r["decoding"]["n_new_tokens"], r
            return
        except remote.ServerUnavailable as exc:
            note = str(exc)
    lm, waited = _load("generate_text", override, progress)
    for completion, n, r in tasks.generate_text_stream(lm, prompt, settings):
        yield completion, n, (r if r is None else _with_waits(_in_process(r, note), waited))


def plan(task: str, override: str | None = None, settings: dict | None = None) -> Plan:
    """Where this task's generation runs (`backend.runtime.plan.Plan`), decided once as the request
    joins the queue: no network and no model (the server's last health check only). `settings`:
    generate_text's (as `_generation` returns them), or the seq2seq widgets' (num_beams)."""
    if not remote.configured_url():
        return Plan(long=True)
    if task == "generate_text":
        if (override or "").strip():
            return Plan(long=True, note=remote.MODEL_BOX_NOTE)
        try:
            reason = remote.in_process_reason(parse_settings(settings))
        except LabError:
            return Plan(long=True)  # refused by the handler in its own words
        return Plan(on_server=reason is None, long=reason is not None or not remote.last_known_up(), note=reason)
    return server_models.plan_for(config.TASK_ROLES[task], override, settings)


def runs_on_server(task: str, override: str | None = None, settings: dict | None = None) -> bool:
    """Will the generation server do this task's generation, as far as its last health check knows?"""
    p = plan(task, override, settings)
    return p.on_server and not p.long


def _server_side(eng: remote.Server) -> tuple:
    """The text-generation role's tokenizer (no weights: the server generates) and the result's provenance."""
    tokenizer, r = hub.tokenizer(config.TASK_ROLES["generate_text"])
    return tokenizer, remote.describe(eng, r.role, r.checkpoint, r.source, r.reason, r.note)


def _on_server(eng: remote.Server, described: dict, prompt: str, res) -> dict:
    """A server's run as the `generate_text` result: the in-process fields, plus where it ran."""
    return {"task": "generate_text", "model": described, "method": config.METHOD_MODEL, "notices": [],
            "prompt": prompt, **tasks._result(prompt, res), "engine": eng.info(), "waited": []}  # the same fields


def _in_process(r: dict, note: str | None) -> dict:
    """Say that generation ran in this process, and why when a server exists."""
    r["engine"] = remote.in_process(note)
    if note:
        r.setdefault("notices", []).insert(0, note)
    return r


def _generation(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed) -> tuple[str, dict]:
    """The prompt and the decoding settings, checked before any model loads by the Decoding
    tab's one validator (`parse_settings`: the same limits and messages in both tabs)."""
    if seed is None or (isinstance(seed, str) and not seed.strip()):
        seed = None
    prompt = check_text(prompt, "prompt")
    strategy = one_of("strategy", strategy, STRATEGIES, default="greedy")
    settings = {"strategy": strategy, "max_new_tokens": max_new_tokens, "temperature": temperature,
                "top_k": top_k, "top_p": top_p, "num_beams": num_beams, "seed": seed}
    checked = parse_settings(settings)
    return prompt, {k: getattr(checked, k) for k in settings}
