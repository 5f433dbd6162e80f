"""The Multilingual tab's snippet (`/multilingual_ner`, chapter 4): the packaged multilingual-e5-small encoder
with the run's fine-tuned top layers and token-classification head (the run's safetensors file, in the app's
cache), the sentence's words tagged by their first word piece, as `AutoModelForTokenClassification` does."""

from __future__ import annotations

from backend.engines.ner import languages
from backend.engines.ner.transfer import MAX_LENGTH  # the window /multilingual_ner tags a sentence in
from backend.hub import multilingual_runs
from backend.runtime.errors import InputError
from backend.snippets.checkpoint import in_cache, loading
from backend.snippets.text import literal, script


def _run_folder() -> str:
    try:
        return in_cache(multilingual_runs.default_folder())
    except InputError:  # not built on this server (then the endpoint has no result to write one for either)
        return 'Path("ner-transfer")  # the folder `python -m backend.hub build` writes under trained/ in the cache'


IMPORTS = ["import os", "from pathlib import Path", "import torch", "from safetensors.torch import load_file"]


def run_lines(run: str, trained_on: str) -> list[str]:
    """Lines that put chapter 4's run `run` ("all", "de") on `encoder` (its fine-tuned top layers) and define
    `labels` and `head` (a linear layer over the encoder's states, one label per token): IMPORTS needed."""
    return [
        f"# chapter 4's {run!r} run (trained on {trained_on}), built by the app in its cache:",
        "# the encoder's fine-tuned top layers and a linear head over its states, one label per token",
        f"run = {_run_folder()}",
        f'weights = load_file(str(run / "{run}.safetensors"))',
        'encoder.load_state_dict({k[len("encoder."):]: v for k, v in weights.items() if k.startswith("encoder.")},',
        "                        strict=False)  # the frozen lower layers stay the packaged model's",
        f"labels = {literal(list(languages.labels()))}",
        "head = torch.nn.Linear(encoder.config.hidden_size, len(labels))",
        'head.load_state_dict({"weight": weights["head.weight"], "bias": weights["head.bias"]})']


def multilingual_ner(inputs: dict, result: dict) -> str:
    run = str(result.get("run") or inputs.get("run") or "all")
    load = loading(result.get("model") or {}, "AutoModel", what="encoder")
    weights = run_lines(run, result.get("trained_on", run))
    tag = [
        f"words = {literal(list(result.get('tokens') or []))}  # the sentence split as the app splits it "
        "(punctuation apart)",
        "enc = tokenizer([words], is_split_into_words=True, truncation=True, "
        f'max_length={MAX_LENGTH}, return_tensors="pt")',
        "with torch.inference_mode():",
        "    probs = head(encoder(**enc).last_hidden_state).softmax(-1)[0]",
        "first = {}  # each word's first piece carries its tag",
        "for pos, word in enumerate(enc.word_ids(0)):",
        "    if word is not None:",
        "        first.setdefault(word, pos)",
        'tags = [labels[int(probs[first[i]].argmax())] if i in first else "O" for i in range(len(words))]',
        "print(list(zip(words, tags)))",
        "# What the app adds: entities joined from the B-/I- tags with the mean of their words' top probabilities, "
        "and the transfer table of the German-only and all-languages runs."]
    imports = [*IMPORTS, *load.imports]
    return script(imports, load.lines, weights, tag)
