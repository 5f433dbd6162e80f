"""Semantic search's snippets (`/build_index`, `/search`): the passages embedded by the same embedder (mean
pooling over the real tokens, L2 normalisation, e5's "query: " / "passage: " prefixes where the model wants
them), a FAISS index of the kind the run used with its knobs named as FAISS names them (only those that differ
from FAISS's defaults), and the query searched in it.

Each result carries `index_settings` (backend/search: the kind, the FAISS class and knobs, the embedder's
checkpoint, prefixes, token limit, pooling and normalisation): the snippet is written from it alone.
"""

from __future__ import annotations

from backend.engines.embedding.vectors import BATCH, DEFAULT_MAX_LENGTH  # how the app embeds passages
from backend.runtime.config import (BUILTIN_CORPORA, DEFAULT_CHUNK_WORDS, DEFAULT_OVERLAP_WORDS, GLOSSARY_FILE,
                                    PASTE_NAME)
from backend.snippets.checkpoint import loading
from backend.snippets.text import literal, script



def _passages(corpus: str, build: dict) -> tuple[list[str], list[str]]:
    """(imports, lines) that define `passages`: each passage's text as the embedder read it ("title: text")."""
    if corpus == "glossary":
        return ["import json"], [
            f"# The glossary the app ships ({GLOSSARY_FILE} in the Transformers Lab repository: run from a checkout)",
            f"docs = [json.loads(line) for line in open({GLOSSARY_FILE!r}, encoding=\"utf-8\") if line.strip()]",
            "passages = [f\"{d['title']}: {' '.join(d['text'].split())}\" for d in docs]  # embedded as \"title: text\""]
    words = (f"{build.get('max_words', DEFAULT_CHUNK_WORDS)} words, "
             f"{build.get('overlap', DEFAULT_OVERLAP_WORDS)} overlapping")
    if corpus == PASTE_NAME and isinstance(build.get("paste"), str) and build["paste"].strip():
        return ["import re"], [
            f"text = {literal(build['paste'])}",
            "# one document per line, or per paragraph where blank lines separate them (as the app reads a paste)",
            'docs = re.split(r"\\n[ \\t]*\\n", text) if re.search(r"\\n[ \\t]*\\n", text.strip()) else text.split("\\n")',
            "passages = [f\"doc {i}: {' '.join(d.split())}\" for i, d in enumerate([d for d in docs if d.strip()], 1)]",
            f"# The app also drops repeated documents and splits a long one into parts of {words}."]
    return [], [f"passages = []  # your corpus {corpus!r}: the app dropped repeated documents, split long ones "
                f"({words}) and embeds each passage as \"title: text\""]


def _embed(index_settings: dict, model: dict) -> tuple[list[str], list[str]]:
    """(imports, lines) that load the embedder and define `embed(texts)` -> unit vectors (float32)."""
    load = loading(model, "AutoModel", what="encoder")
    limit = int(index_settings.get("max_length") or DEFAULT_MAX_LENGTH)
    return ["import numpy as np", "import torch", *load.imports], load.lines + [
        "",
        "def embed(texts):",
        f'    enc = tokenizer(texts, padding=True, truncation=True, max_length={limit}, return_tensors="pt")',
        "    with torch.inference_mode():",
        "        hidden = encoder(**enc).last_hidden_state",
        '    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)',
        "    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # mean pooling over the real tokens",
        "    return torch.nn.functional.normalize(pooled, dim=1).numpy()  # unit length: inner product = cosine"]


def _faiss_defaults() -> dict:
    """FAISS's own values for the knobs a run may set, read from fresh indexes (a knob equal to one is left out)."""
    import faiss

    hnsw = faiss.IndexHNSWFlat(8, 8).hnsw
    return {"efConstruction": hnsw.efConstruction, "efSearch": hnsw.efSearch,
            "nprobe": faiss.IndexIVFFlat(faiss.IndexFlatIP(8), 8, 1).nprobe}


def _index(s: dict) -> list[str]:
    """The FAISS index of the run's kind over `vectors`, with the knobs that differ from FAISS's defaults."""
    library = _faiss_defaults()
    kind, ip = s.get("kind", "flat"), "faiss.METRIC_INNER_PRODUCT"
    lines = ["d = vectors.shape[1]"]
    if kind == "flat":
        lines.append("index = faiss.IndexFlatIP(d)")
    elif kind == "sq8":
        lines.append(f"index = faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_8bit, {ip})")
    elif kind == "hnsw":
        lines.append(f"index = faiss.IndexHNSWFlat(d, {int(s['M'])}, {ip})  # M={int(s['M'])}")
        if int(s["efConstruction"]) != library["efConstruction"]:
            lines.append(f"index.hnsw.efConstruction = {int(s['efConstruction'])}")
    elif kind == "ivf_flat":
        lines.append(f"index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, {int(s['nlist'])}, {ip})  # nlist")
    else:
        lines.append(f"index = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, {int(s['nlist'])}, {int(s['M'])}, "
                     f"{int(s['nbits'])}, {ip})  # nlist, M, nbits")
    if kind in ("sq8", "ivf_flat", "ivf_pq"):
        lines.append("index.train(vectors)")
    lines.append("index.add(vectors)")
    if kind == "hnsw" and int(s["efSearch"]) != library["efSearch"]:
        lines.append(f"index.hnsw.efSearch = {int(s['efSearch'])}")
    if kind in ("ivf_flat", "ivf_pq") and int(s["nprobe"]) != library["nprobe"]:
        lines.append(f"index.nprobe = {int(s['nprobe'])}")
    return lines


def _build(result: dict, build: dict) -> tuple[list[str], list[list[str]]]:
    """(imports, blocks) up to a filled `index` over `passages`."""
    s = result.get("index_settings") or {}
    corpus_imports, corpus = _passages(str(result.get("corpus", "")), build)
    embed_imports, embed = _embed(s, result.get("model") or {})
    prefix = s.get("passage_prefix") or ""
    texts = f"[{prefix!r} + p for p in passages[i:i + {BATCH}]]" if prefix else f"passages[i:i + {BATCH}]"
    vectors = [f"vectors = np.vstack([embed({texts}) for i in range(0, len(passages), {BATCH})])"]
    return [*corpus_imports, "import faiss", *embed_imports], [corpus, embed, vectors + _index(s)]


def build_index(inputs: dict, result: dict) -> str:
    imports, blocks = _build(result, inputs)
    done = ["print(index.ntotal, \"passages indexed\")",
            "# What the app adds: memory, one-query latency and recall@10 against exact search, measured on "
            "this index; built-in corpora are cached and shared."]
    return script(imports, *blocks, done)


def search(inputs: dict, result: dict) -> str:
    imports, blocks = _build(result, {})
    s = result.get("index_settings") or {}
    prefix = s.get("query_prefix") or ""
    query = f"[{prefix!r} + query]" if prefix else "[query]"
    run = [f"query = {literal(result.get('query', inputs.get('query', '')))}",
           f"scores, ids = index.search(embed({query}), {int(result.get('k') or inputs['k'])})",
           "for score, i in zip(scores[0], ids[0]):",
           "    print(round(float(score), 4), int(i), passages[i][:80])",
           "# What the app adds: the index stays in your session between searches, and the corpus map (a PCA of "
           "the vectors) places the query among the passages."]
    return script(imports, *blocks, run)


KNOB_ARGUMENTS = {"M": "m", "efConstruction": "efc", "efSearch": "efs", "nlist": "nlist", "nprobe": "nprobe",
                  "nbits": "pq_bits"}  # index_settings' FAISS names -> /build_index's arguments (IVF-PQ's M: pq_m)


def client_build(result: dict) -> tuple[str, dict] | None:
    """The /build_index call that gives a script's session the index the search ran on (a script's session starts
    with none): the same corpus, embedder and index kind and knobs. None for a corpus a call cannot name again
    (an upload or a paste: /build_index with that file or text does)."""
    corpus = str(result.get("corpus") or "")
    if corpus not in BUILTIN_CORPORA:
        return None
    s = result.get("index_settings") or {}
    kind = str(s.get("kind") or "flat")
    args: dict = {"choice": corpus, "index_type": kind}
    for name, arg in KNOB_ARGUMENTS.items():
        if name in s:
            args["pq_m" if kind == "ivf_pq" and name == "M" else arg] = int(s[name])
    if result.get("embedder"):
        args["embedder"] = str(result["embedder"])
    return "build_index", args
