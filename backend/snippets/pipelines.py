"""The Pipelines tab's snippets: `pipeline(task, model=...)` with the settings the learner chose.

Where the book's checkpoint (or any model of the task's kind) served, the snippet is the library's one
call. Where the local profile served the task its own way (the classifier fine-tuned here, similarity to
label descriptions, the chat model prompted for the task, the decoder filling a mask), the snippet shows
the library part that the result rests on and says in one line what the app adds.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from transformers import FillMaskPipeline

from backend.engines.embedding.vectors import DEFAULT_MAX_LENGTH as EMBED_MAX_LENGTH  # the encoder's reach here
from backend.hub import builders
from backend.hub.policy import package_dir
from backend.runtime import config
from backend.runtime.config import METHOD_EMBEDDING, METHOD_FINETUNED
from backend.snippets import generation, instruct, local_heads
from backend.snippets.checkpoint import hub_or_folder, in_cache, loading, packaged_spec
from backend.snippets.text import call, differing, literal, script

# what transformers' fill-mask pipeline gives when top_k is left out
FILL_MASK_TOP_K = inspect.signature(FillMaskPipeline.postprocess).parameters["top_k"].default


def _texts(inputs: dict, result: dict) -> list[str]:
    return [r.get("sequence", r.get("text", "")) for r in result.get("results", [])] or [inputs.get("text", "")]


def _pipeline(task: str, model: dict, call_line: str, app_adds: str = "", options: dict | None = None) -> str:
    """`pipeline(task, model=...)` for the checkpoint that served the run. A run the local profile served its
    own way (`app_adds` says how) has no such call: the task's call is shown with the book's checkpoint,
    and the note says that it gives that model's answer, not this run's."""
    if (model or {}).get("method", "model") != "model":
        book = config.BOOK.get(model.get("role", ""))
        served = f"{model.get('checkpoint', '?')} ({model.get('method', '?')}: {app_adds or model.get('note', '')})"
        app_adds = (f"this run was served offline by {served}. No library call does that; above is the task's "
                    "call with the book's checkpoint, which gives that model's answer, not this run's.")
        model = {"checkpoint": book.checkpoint if book else model.get("checkpoint"), "source": "hub"}
    imports, lines, name = hub_or_folder(model)
    made = "".join(f", {k}={literal(v)}" for k, v in (options or {}).items())
    body = [f"pipe = pipeline({task!r}, model={name}{made})", call_line, "print(out)"]
    notes = [f"# What the app adds: {app_adds}"] if app_adds else []
    return script([*imports, "from transformers import pipeline"], lines, body, notes)


def _by_similarity(texts: list[str], descriptions: list[str], model: dict, scoring: str) -> str:
    """The embedding method (the local profile's zero-shot): the library part is the sentence embeddings and
    their cosine similarities; the app's scoring of them is said in one line."""
    load = loading(model, "AutoModel", what="encoder")
    run = [f"texts = {literal(texts)}", f"descriptions = {literal(descriptions)}", "",
           "def embed(batch):",
           f'    enc = tokenizer(batch, padding=True, truncation=True, max_length={EMBED_MAX_LENGTH}, return_tensors="pt")',
           "    with torch.inference_mode():",
           "        hidden = encoder(**enc).last_hidden_state",
           '    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)',
           "    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=1)",
           "", "cosine = embed(texts) @ embed(descriptions).T  # one row per text, one column per description",
           "for text, row in zip(texts, cosine.tolist()):  # a text's cosine with each description, in their order",
           "    print([round(c, 4) for c in row], text[:40])"]
    return script(["import torch", *load.imports], load.lines, run, [f"# What the app adds: the scores are {scoring}"])


def _app_note(result: dict) -> str:
    """The result's own words on how it was made (its `scoring` or the model's note)."""
    return result.get("scoring") or (result.get("model") or {}).get("note") or ""


def trained_sentiment_folder(model: dict) -> Path | None:
    """The folder of the offline sentiment classifier trained here (its cache, found as the loader finds it)."""
    spec = packaged_spec(model)
    root = package_dir(spec.module) if spec is not None and spec.module else None
    if root is None or model.get("role") != "sentiment":
        return None
    return builders.cache_dir(root / spec.subdir if spec.subdir else root)


def finetuned_loading(folder: Path) -> tuple[list[str], list[str]]:
    """(imports, lines) that load the offline sentiment classifier trained here: `tokenizer`, `encoder`, `head`,
    `labels`, from the app's cache by its documented place (TLAB_CACHE_DIR), never by this server's path."""
    imports = ["import json", "import os", "from pathlib import Path", "import torch",
               "from safetensors.torch import load_file", "from transformers import AutoModel, AutoTokenizer"]
    return imports, [
        "# all-MiniLM-L6-v2 fine-tuned once by this app on its shipped sentiment set, in the app's cache (the Train",
        "# tab's Download holds the same layout): the encoder, a linear head on its mean-pooled states, the labels",
        f"folder = {in_cache(folder)}",
        "tokenizer = AutoTokenizer.from_pretrained(folder)",
        "encoder = AutoModel.from_pretrained(folder).eval()",
        'head = load_file(str(folder / "head.safetensors"))',
        'labels = json.loads((folder / "labels.json").read_text())']


def _finetuned_classify(texts: list[str], folder: Path) -> str:
    imports, load = finetuned_loading(folder)
    run = [f"texts = {literal(texts)}",
           f'enc = tokenizer(texts, padding=True, truncation=True, max_length={EMBED_MAX_LENGTH}, return_tensors="pt")',
           "with torch.inference_mode():",
           "    hidden = encoder(**enc).last_hidden_state",
           '    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)',
           "    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)  # mean pooling",
           '    probs = torch.softmax(pooled @ head["weight"].T + head["bias"], dim=-1)',
           "for text, p in zip(texts, probs.tolist()):",
           "    print(sorted(zip(labels, p), key=lambda lp: -lp[1]), text[:40])"]
    return script(imports, load, run)


def classify(inputs: dict, result: dict) -> str:
    model, texts = result.get("model") or {}, _texts(inputs, result)
    folder = trained_sentiment_folder(model) if model.get("method") == METHOD_FINETUNED else None
    if folder is not None:
        return _finetuned_classify(texts, folder)
    if model.get("method") == METHOD_EMBEDDING:  # a model box naming an embedding model: its label descriptions
        described = list((result.get("label_descriptions") or {}).values())
        return _by_similarity(texts, described, model, result.get("scoring") or "")
    adds = "" if model.get("method") == "model" else _app_note(result)
    return _pipeline("text-classification", model, f"out = pipe({literal(texts)}, top_k=None)", adds)


def zero_shot(inputs: dict, result: dict) -> str:
    kw = differing({"multi_label": bool(result.get("multi_label", inputs.get("multi_label", False))),
                    "hypothesis_template": inputs.get("template") or "This example is {}."},
                   {"multi_label": False, "hypothesis_template": "This example is {}."})
    labels = [l.strip() for l in str(inputs.get("labels", "")).split(",") if l.strip()]
    model = result.get("model") or {}
    if model.get("method") == METHOD_EMBEDDING:
        template = inputs.get("template") or "{}"
        described = [template.replace("{}", l) for l in labels]  # as the app writes each description
        return _by_similarity(_texts(inputs, result), described, model, result.get("scoring") or "")
    line = "out = " + call("pipe", [literal(_texts(inputs, result))], {"candidate_labels": labels, **kw})
    return _pipeline("zero-shot-classification", model, line, "" if model.get("method") == "model" else _app_note(result))


def ner(inputs: dict, result: dict) -> str:
    folder = local_heads.trained_folder(result.get("model") or {}, "ner")
    if folder is not None:  # the NER model trained here: the run itself, with the aggregation the app applied
        aggregation = result.get("aggregation") or inputs.get("aggregation") or "simple"
        return local_heads.ner(_texts(inputs, result), aggregation, folder)
    kw = differing({"aggregation_strategy": inputs.get("aggregation") or "simple"}, {"aggregation_strategy": "none"})
    model = result.get("model") or {}
    line = f"out = pipe({literal(_texts(inputs, result))})"
    return _pipeline("ner", model, line, "" if model.get("method") == "model" else _app_note(result), options=kw)


def _asked_top_n(inputs: dict, result: dict) -> int:
    """The answers the run asked for: the result says (the endpoint's default included), else the inputs."""
    return int((result.get("top_n") or {}).get("asked") or inputs["top_n"])


def qa(inputs: dict, result: dict) -> str:
    folder = local_heads.trained_folder(result.get("model") or {}, "qa")
    if folder is not None:  # the reader trained here: the run itself, its spans, [CLS] and threshold
        top_n = _asked_top_n(inputs, result)
        return local_heads.qa(result.get("question", inputs.get("question", "")),
                              result.get("context", inputs.get("context", "")), top_n,
                              list(result.get("set_aside") or []), folder)
    kw = differing({"top_k": _asked_top_n(inputs, result)}, {"top_k": 1})  # the pipeline's own: one answer
    line = "out = " + call("pipe", [], {"question": inputs.get("question", ""), "context": inputs.get("context", ""),
                                        **kw})
    model = result.get("model") or {}
    return _pipeline("question-answering", model, line, "" if model.get("method") == "model" else _app_note(result))


def _seq2seq(task: str, inputs: dict, result: dict) -> str:
    if (result.get("model") or {}).get("method") == config.METHOD_INSTRUCT:  # the chat model prompted for the task
        return (instruct.summarize if task == "summarization" else instruct.translate)(inputs, result)
    ran = result.get("settings") or {}  # what generate was given: the endpoint's defaults included
    chosen = {k: int(inputs[k] if inputs.get(k) not in (None, "") else ran[k])
              for k in ("max_new_tokens", "min_new_tokens") if inputs.get(k) not in (None, "") or k in ran}
    chosen["num_beams"] = int(inputs.get("num_beams") or 0)
    kw = differing(chosen, {"min_new_tokens": 0, "num_beams": 0})  # 0 beams: the checkpoint's own default
    if task == "translation":
        task = f"translation_{inputs.get('source', 'en')}_to_{inputs.get('target', 'de')}"
        kw.pop("min_new_tokens", None)
    line = "out = " + call("pipe", [literal(inputs.get("text", ""))], kw)
    model = result.get("model") or {}
    return _pipeline(task, model, line, "" if model.get("method") == "model" else _app_note(result))


def summarize(inputs: dict, result: dict) -> str:
    return _seq2seq("summarization", inputs, result)


def translate(inputs: dict, result: dict) -> str:
    return _seq2seq("translation", inputs, result)


def fill_mask(inputs: dict, result: dict) -> str:
    if (result.get("model") or {}).get("method") == config.METHOD_DECODER_MASK:  # the decoder's rerank
        return instruct.fill_mask(inputs, result)
    asked = inputs.get("top_k") or len(result.get("candidates") or [])  # a masked LM gives top_k candidates
    kw = differing({"top_k": int(asked)}, {"top_k": FILL_MASK_TOP_K}) if asked else {}
    line = "out = " + call("pipe", [literal(inputs.get("text", ""))], kw)
    model = result.get("model") or {}
    return _pipeline("fill-mask", model, line, "" if model.get("method") == "model" else _app_note(result))


def generate_text(inputs: dict, result: dict) -> str:
    d = result.get("decoding") or {}
    return generation.snippet(result.get("prompt", inputs.get("prompt", "")), d.get("settings") or {},
                              result.get("model") or {})
