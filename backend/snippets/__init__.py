"""The code behind a result: for an endpoint's inputs and its JSON result, a short runnable
snippet with the library's own calls (`python`), the `gradio_client` call of the same endpoint
(`client`), and the book chapter it belongs to (`chapter`, a number the page links).

    snippets.for_result("classify", {"text": "..."}, result)  # -> {"python", "client", "chapter", "endpoint"}

Plain strings; no model is loaded. Each tab's family lives in its own module."""

from __future__ import annotations

from typing import Callable

from backend.snippets import (anatomy, attention, compress, decoding, efficiency, interventions, multilingual, pipelines,
                              printed, scratch, search, tokenizers, train, train_ner, why)
from backend.snippets.notebook import KEEP_BYTES as NOTEBOOK_KEEP_BYTES  # noqa: F401  (said on the page)
from backend.snippets.notebook import notebook, notebook_file  # noqa: F401  (the page's download)
from backend.snippets.text import DEFAULT_URL, Code, client_call, file_name

__all__ = ["FAMILIES", "for_result", "client_arguments", "notebook", "notebook_file", "NOTEBOOK_KEEP_BYTES"]

# endpoint -> (snippet writer, the book chapter it belongs to)
FAMILIES: dict[str, tuple[Callable[[dict, dict], str], int]] = {
    "classify": (pipelines.classify, 2),
    "zero_shot": (pipelines.zero_shot, 9),
    "ner": (pipelines.ner, 4),
    "qa": (pipelines.qa, 7),
    "summarize": (pipelines.summarize, 6),
    "translate": (pipelines.translate, 1),
    "fill_mask": (pipelines.fill_mask, 1),
    "generate_text": (pipelines.generate_text, 5),
    "decode": (decoding.decode, 5),
    "tokenize": (tokenizers.tokenize, 2),
    "build_index": (search.build_index, 7),
    "search": (search.search, 7),
    "attention": (attention.attention, 3),
    "anatomy": (anatomy.anatomy, 3),
    "intervene": (interventions.intervene, 3),
    "attribute": (why.attribute, 2),
    "efficiency": (efficiency.efficiency, 8),
    "compress": (compress.compress, 8),
    "multilingual_ner": (multilingual.multilingual_ner, 4),
    "train_tokenizer": (scratch.train_tokenizer, 10),
    "train_gpt": (scratch.train_gpt, 10),
    "train_seq2seq": (scratch.train_seq2seq, 3),
    "train": (train.train, 2),
    "train_ner": (train_ner.train_ner, 4),
}


MODEL_CHOICES = ("model_box", "model", "override")  # an empty one means the profile's model: left out of a call
FILE_INPUTS = ("file", "upload")  # an endpoint's uploaded file, by its argument's name


def client_arguments(endpoint: str, inputs: dict, result: dict) -> dict:
    """The endpoint's arguments as a script passes them: the inputs (an empty model choice left out);
    /decode takes its settings as one dict, the run's own."""
    if endpoint == "decode":
        settings = decoding.client_settings(result.get("settings") or {})
        return {"prompt": inputs.get("prompt") or result.get("prompt_text", ""), "settings": settings}
    for key in FILE_INPUTS:
        if inputs.get(key):  # an upload: the learner's own file by its name, never the server's copy of it
            inputs = {**inputs, key: Code(f"handle_file({file_name(inputs[key])!r})")}
    return {k: v for k, v in (inputs or {}).items() if not (k in MODEL_CHOICES and not v)}


def for_result(endpoint: str, inputs: dict, result: dict, url: str = DEFAULT_URL, result_at: int | None = None) -> dict:
    """{"endpoint", "python", "client", "chapter"} for one run; an unknown endpoint is a bug (KeyError).
    `result_at`: where the run's JSON is among the endpoint's outputs (None: the endpoint returns it alone)."""
    write, chapter = FAMILIES[endpoint]
    inputs, result = dict(inputs or {}), result or {}
    first = FIRST[endpoint](result) if endpoint in FIRST else None
    client = client_call(endpoint, client_arguments(endpoint, inputs, result), url, first=first, result_at=result_at,
                         shown=printed.lines(endpoint, result))
    return {"endpoint": endpoint, "python": write(inputs, result), "client": client, "chapter": chapter}


# endpoint -> the call the page made before it, from the run's result (a script's session starts empty)
FIRST: dict[str, Callable[[dict], tuple[str, dict] | None]] = {"search": search.client_build}
