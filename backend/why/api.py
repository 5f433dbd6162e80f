"""`/attribute`: which tokens of the input a prediction rests on, by several methods, and checks of them.

The entry point reads its arguments first (a typo is refused before a model loads), asks the
hub for the task's role inside `gpu_task`, builds the task's `Target`, runs the methods and the
checks under the request's budget (each forward checks it, so a Stop or the deadline ends the
work within one forward), and returns plain JSON.
"""

from __future__ import annotations

import time

import numpy as np

from backend import hub
from backend.hub import session_models
from backend.why import checks, claims, span, tasks
from backend.why import methods as mth
from backend.why.methods import METHODS
from backend.engines.classify import similarity as sim
from backend.runtime import budget, config
from backend.runtime.device import gpu_task
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int, check_template, check_text, opt_text

TASKS = ("sentiment", "session", "zero_shot", "ner", "next_token", "qa")
ROLES = {"sentiment": "sentiment", "session": "embedder", "zero_shot": "zero_shot", "ner": "ner",
         "next_token": "decoder", "qa": "qa"}
SESSION_PROVIDER = "why-classifier"  # backend.train offers a session's classifier under this name
EXPLANATIONS = ("gradient_x_input", "integrated_gradients", "occlusion", "attention_rollout")
DEFAULTS = {"sentiment": (mth.DEFAULT_STEPS, checks.RANDOM_ORDERS), "next_token": (16, 4)}  # (IG steps, random orders)
MAX_STEPS = 256
MAX_RANDOM_ORDERS = 20
WORDS = {
    "gradient_x_input": "gradient x input",
    "integrated_gradients": "integrated gradients",
    "occlusion": "occlusion (leave one token out)",
    "attention_rollout": "attention rollout",
    "last_layer_attention": "raw last-layer attention (not an explanation)",
}


def parse_methods(value) -> list[str]:
    """A list or a comma-separated string of method names; empty = all."""
    if value is None or value == "" or value == []:
        return list(METHODS)
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    out = []
    for item in items:
        name = str(item).strip().lower().replace(" ", "_").replace("-", "_")
        if name not in METHODS:
            raise InputError(f"methods: unknown attribution method '{str(item)[:40]}'; choose from: "
                             f"{', '.join(METHODS)}.")
        if name not in out:
            out.append(name)
    return out


def attribute(text, task: str = "sentiment", label=None, target=None, contrast=None, labels=None,
              template: str = sim.DEFAULT_TEMPLATE, char=None, methods=None, steps=None,
              random_orders=None, word=None, session_id: str | None = None,
              trained_method: str = "", override: str | None = None, question=None, progress=None) -> dict:
    """Per-token attributions for one prediction (`task`), and the checks of them, as JSON.

    `label`: explain this label instead of the predicted one; `target` / `contrast`: the next
    token to explain and the one to compare it with; `labels` / `template`: zero-shot's candidate
    labels; `char` or `word` (its first occurrence): the NER token whose label is explained;
    task "session": the classifier this session trained in the Train tab (`trained_method`:
    "probe", "finetune" or "" for its best); task "qa": `text` is the context, `question` the question,
    `label` a span of the context to explain instead of the reader's answer."""
    start = time.perf_counter()
    task = str(task or "sentiment").strip().lower().replace("-", "_").replace(" ", "_")
    if task not in TASKS:
        raise InputError(f"Unknown task '{task[:40]}'; choose from: {', '.join(TASKS)}.")
    args = {
        "text": check_text(text, {"next_token": "prompt", "qa": "context"}.get(task, "text")),
        "question": opt_text("question", question, max_chars=1000),
        "label": opt_text("label", label), "target": opt_text("target", target),
        "contrast": opt_text("contrast", contrast),
        "labels": _labels(labels),
        "template": check_template("template", template, sim.DEFAULT_TEMPLATE),
        "char": None if char in (None, "") else as_int("char", char, lo=0, hi=10**6),
        "methods": parse_methods(methods),
        "steps": as_int("steps", _default(steps, task, 0), lo=2, hi=MAX_STEPS),
        "random_orders": as_int("random_orders", _default(random_orders, task, 1), lo=1, hi=MAX_RANDOM_ORDERS),
    }
    if args["char"] is None and opt_text("word", word):
        args["char"] = _char_of(args["text"], opt_text("word", word))
    if task == "qa" and not args["question"]:
        raise InputError("QA needs a question: the text is the context the answer span is taken from.")
    if task == "zero_shot" and not args["labels"]:
        raise InputError("Zero-shot needs candidate labels, e.g. 'sport, politics, cooking'.")
    override = opt_text("model_box", override, max_chars=config.MAX_OVERRIDE_CHARS)
    args["session"] = (session_id, opt_text("trained_method", trained_method) or "")
    with budget.scope():
        r = _attribute(task, args, override, progress)
    r["seconds"] = round(time.perf_counter() - start, 4)
    return r


def _labels(value):
    """Zero-shot's candidate labels: comma-separated text or a list of texts."""
    if value is None or value == "":
        return None
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise InputError("labels: give the candidate labels as text, e.g. 'sport, politics, cooking'.")
        return [check_text(v, "labels") for v in value]
    return check_text(value, "labels")


def _default(value, task: str, which: int):
    """None, "" or 0 -> the task's default (IG steps, random orders): the decoder's are smaller, so a
    128-token prompt fits the request budget on a 2-core CPU (bench/results/attribution.md)."""
    if value is None or value == "" or value == 0:
        return DEFAULTS.get(task, DEFAULTS["sentiment"])[which]
    return value


def _char_of(text: str, word: str) -> int:
    at = text.lower().find(word.lower())
    if at < 0:
        raise InputError(f"'{word[:40]}' does not occur in the text: type a word of the text to explain its tag.")
    return at


@gpu_task(duration=120)
def _attribute(task: str, args: dict, override, progress) -> dict:
    if task == "session":
        lm = _session_model(*args["session"])
    elif task == "ner" and (override or "").strip().lower() in MULTILINGUAL_NER:
        lm = _MultilingualNer(MULTILINGUAL_NER[override.strip().lower()], progress)
    else:
        lm = hub.load(ROLES[task], override, progress)
    target, info = _target(task, lm, args)
    done = {"methods": []}
    target.on_forward = lambda: budget.check(
        f"computed {', '.join(done['methods']) or 'no method yet'}",
        "Ask for fewer methods, fewer integrated-gradients steps or a shorter text.")
    timing, full = _time_forward(target)  # f(text), computed once: the checks and the result reuse it
    scores, completeness, attention = {}, None, None
    for i, name in enumerate(args["methods"]):
        if progress is not None:
            progress(0.1 + 0.6 * i / len(args["methods"]), f"Computing {WORDS[name]}")
        t0 = time.perf_counter()
        if name == "integrated_gradients":
            scores[name], completeness = _integrated_gradients(target, args["steps"], refine=task != "next_token",
                                                               f_input=full)
        elif name in ("attention_rollout", "last_layer_attention"):
            if attention is None:  # rollout and raw attention read off one forward's weights
                attention = (*mth.attention_scores(target), time.perf_counter() - t0)
            scores[name] = attention[0] if name == "attention_rollout" else attention[1]
            t0 = time.perf_counter() - attention[2]  # each is timed as if alone (what it costs by itself)
        elif name == "occlusion":
            scores[name] = mth.occlusion(target)
        else:
            scores[name] = mth.gradient_x_input(target)
        timing[name] = round(time.perf_counter() - t0, 4)
        done["methods"].append(WORDS[name])
    if progress is not None:
        progress(0.75, "Checking the scores (deletion test)")
    t0 = time.perf_counter()
    result = _result(task, lm, target, info, scores, completeness, args, full)
    timing["checks"] = round(time.perf_counter() - t0, 4)
    result["timing"] = timing
    return result


MULTILINGUAL_NER = {"multilingual": "all", "multilingual-de": "de"}  # the model box's names for chapter 4's runs


class _MultilingualNer:
    """Chapter 4's NER model (the packaged multilingual encoder fine-tuned here on all four languages, or on
    German only) dressed as a loaded model, so a German, French or Italian sentence's tags are explained."""

    method = config.METHOD_FINETUNED

    def __init__(self, run: str, progress=None):
        from backend.engines.ner import languages as ner_languages
        from backend.hub import multilingual_runs

        base = hub.load("multilingual", None, progress)
        self.model = multilingual_runs.serving_model(run, base, ner_languages.labels())
        self.tokenizer = base.tokenizer
        self._describe = {**base.describe(), "role": "ner", "method": config.METHOD_FINETUNED,
                          "fine_tuned": f"chapter 4's default run, trained on {multilingual_runs.RUN_NAMES[run]}",
                          "run": run}  # which run's weights (the Why tab's snippet loads the same file)

    def describe(self) -> dict:
        return dict(self._describe)


class _Session:
    """A session's classifier dressed as a loaded model (what `_target` and `_result` read)."""

    method = config.METHOD_MODEL

    def __init__(self, found: dict):
        self.model, self.tokenizer, self._describe = found["model"], found["tokenizer"], found["describe"]

    def describe(self) -> dict:
        return dict(self._describe)


def _session_model(session_id, method: str) -> _Session:
    found = session_models.serve(SESSION_PROVIDER, session_id, method) if session_id else None
    if found is None:
        raise InputError("This session has no trained classifier: train one in the Train tab first (the Why tab "
                         "explains the classifier trained in the same page).")
    return _Session(found)


def _integrated_gradients(target, steps: int, refine: bool = True, f_input: float | None = None):
    """IG at `steps`; where its completeness gap is over 5% (and `refine`: the classifiers, whose
    promise it is), again at 2x and 4x the steps (at most MAX_STEPS) while the request's budget has
    4x the last run's time left (the run after it is 2x as long, and the other methods follow).
    The result says which steps it ended at and what the gap was at the first."""
    t0 = time.perf_counter()
    scores, comp = mth.integrated_gradients(target, steps, f_input=f_input)
    first = {"steps": steps, "relative_gap": comp["relative_gap"]}
    for more in (steps * 2, steps * 4):
        spent = time.perf_counter() - t0
        b = budget.current()
        if (not refine or checks.completeness_ok(comp) is not False or more > MAX_STEPS
                or (b is not None and b.remaining() < 4 * spent)):
            break
        t0 = time.perf_counter()
        scores, comp = mth.integrated_gradients(target, more, f_input=f_input)
    comp["first_try"] = first
    return scores, comp


def _target(task: str, lm, args: dict):
    text = args["text"]
    if task == "next_token":
        return tasks.next_token(lm.model, lm.tokenizer, text, args["target"], args["contrast"])
    if args["target"] or args["contrast"]:
        raise InputError("target and contrast are for the next-token task; this task explains a label.")
    if task == "qa":
        if lm.method not in (config.METHOD_MODEL, config.METHOD_FINETUNED):
            raise InputError("This QA model is the instruct decoder copying spans: it has no start and end logits to "
                             "explain. Use a reader with a span head (the one trained here: empty the model box).")
        return span.answer_span(lm.model, lm.tokenizer, args["question"], text, args["label"])
    if task == "ner":
        if lm.method == config.METHOD_INSTRUCT:
            raise InputError("This NER model is the instruct decoder prompted to list entities: it has no "
                             "per-token label to explain. Use a token-classification model (the offline one).")
        return tasks.token_label(lm.model, lm.tokenizer, text, args["char"], args["label"])
    if lm.method == config.METHOD_EMBEDDING:
        if task == "zero_shot":
            names = sim.parse_labels(args["labels"])
            desc = {n: args["template"].replace("{}", n) for n in names}
        else:
            desc = dict(sim.SENTIMENT_DESCRIPTIONS)
        return tasks.similarity(lm.model, lm.tokenizer, text, desc, args["label"], sim.DEFAULT_TEMPERATURE)
    if task == "zero_shot":
        raise InputError("Attributions for an NLI zero-shot model are not offered yet: the local profile's "
                         "embedding-similarity zero-shot is (empty the model box).")
    return tasks.classifier(lm.model, lm.tokenizer, text, args["label"])


def _time_forward(target) -> tuple[dict, float]:
    t0 = time.perf_counter()
    full = target.value()
    return {"one_forward": round(time.perf_counter() - t0, 4)}, full


def _checked(task, target, scores, completeness, args, full: float, tokens: list[dict]) -> dict:
    """The checks of the scores and what they let the page claim (backend.why.claims)."""
    checked: dict = {"meanings": dict(checks.MEANINGS)}
    f_base = completeness["f_baseline"] if completeness is not None else target.baseline_value()
    checked["scale"] = claims.scale(full, f_base, list(scores))
    status = None
    if completeness is not None:
        checked["completeness"] = {**{k: (round(v, 6) if isinstance(v, float) else v) for k, v in completeness.items()},
                                   "ok": checks.completeness_ok(completeness)}
        checked["completeness"]["verdict"] = claims.completeness(
            completeness, MAX_STEPS, suggest_contrast=task == "next_token" and not args["contrast"])
        status = checked["completeness"]["verdict"]["status"]
    if scores:
        known = None
        if "occlusion" in scores:  # occlusion already ran the text without each token: the deletion reuses it
            known = (full, full - np.asarray(scores["occlusion"]))
        dl = checks.deletion(target, scores, args["random_orders"], known=known)
        explanations = [m for m in dl["ranking"] if m in EXPLANATIONS]
        dl["ranking"] = explanations
        checked["deletion"] = dl
        checked["faithfulness"] = claims.faithfulness(dl, scores, tokens, [m for m in scores if m in EXPLANATIONS],
                                                      status)
        checked["most_faithful"] = checked["faithfulness"]["method"]
    if len(scores) > 1:
        checked["agreement"] = checks.agreement(scores)
    checked["notes"] = claims.notes(scores, tokens, list(target.positions), full, target.quantity,
                                    checked.get("agreement"))
    return checked


def _result(task, lm, target, info, scores, completeness, args, full: float) -> dict:
    offsets = info.pop("offsets")
    parts, texts = info.pop("parts", None), info.pop("texts", None)
    tokens = []
    for p in target.positions:
        source = texts[parts[p]] if parts else args["text"]  # QA: a question token's offsets are the question's
        tokens.append({"index": p, "token": source[offsets[p][0]:offsets[p][1]], "start": int(offsets[p][0]),
                       "end": int(offsets[p][1]), **({"part": parts[p]} if parts else {})})
    checked = _checked(task, target, scores, completeness, args, full, tokens)
    if "focus" in info:  # NER: the tagged token is what is explained, so it is not among the scored ones
        info["focus"]["scored"] = False
        info["focus"]["why_not_scored"] = (
            f"'{info['focus']['token']}' is the token whose tag is explained: its label is read at its position, so "
            "it cannot be removed (occlusion, the deletion test) or replaced by the baseline without removing what "
            "is explained; every method scores the other tokens.")
    return {"task": task, "model": lm.describe(), "quantity": target.quantity, "value": round(full, 6),
            "prediction": info, "tokens": tokens, "methods": list(scores),
            "method_words": {m: WORDS[m] for m in scores},
            "explanations": [m for m in scores if m in EXPLANATIONS],
            "scores": {m: np.round(s, 6).tolist() for m, s in scores.items()},
            "checks": checked, "settings": {"steps": args["steps"], "random_orders": args["random_orders"],
                                            "baseline": "[PAD] at every scored token, special tokens kept",
                                            "removal": "a removed token leaves the sequence (the rest close up)"},
            "notices": []}
