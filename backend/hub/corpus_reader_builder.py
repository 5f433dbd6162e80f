"""The reader adapted to its own corpus (chapter 7's last step), built once into the cache at set-up
(`python -m backend.hub build`) by its recipe (backend/engines/qa/adaptation.py): the general offline reader
(reader_builder.py: MiniLM with a span head trained on assets/data/qa) fine-tuned on the glossary's train
split and on retrieved-but-wrong passages as "no answer", its no-answer threshold, rank penalty and reading
depth chosen on validation (end to end, over the passages the retriever finds there, as Ask reads them), and the
before/after table measured on the test split
and stored beside it (TABLE_FILE), so the page shows stored figures and no click measures them.

The one builder shape (cache_build.py: `conversion.write_once` under `<cache>/trained/<RECIPE>-<key>`); the
key covers the glossary QA splits, the glossary corpus, the recipe's settings and the general reader's own
weights (its folder is the base location), so retraining the general reader rebuilds this one too. Ask the
corpus reads with it on the local profile; the Pipelines' `qa` role stays the general reader.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from backend.engines.qa import adaptation, data as qa_data
from backend.hub import reader_builder
from backend.hub.cache_build import CacheBuild
from backend.runtime import budget as request_budget, fixed_work

RECIPE = "reader-glossary-v5"  # bump when the recipe changes
TABLE_FILE = "chapter7_table.json"
CLASSIFIER = ("the offline reader (all-MiniLM-L6-v2 with a span head, trained SQuAD 2.0 style on the shipped "
              "general QA set), then fine-tuned on the glossary's own questions")


def _glossary_path() -> Path:
    return Path(__file__).resolve().parents[2] / "assets" / "corpus" / "glossary.jsonl"


BUILD = CacheBuild(RECIPE, lambda: [qa_data.GLOSSARY_DIR / f"{s}.jsonl" for s in qa_data.GLOSSARY_SPLITS]
                   + [_glossary_path()],
                   lambda: json.dumps(adaptation.recipe_settings(), sort_keys=True).encode(),
                   (__name__, "backend.hub.reader_builder"))  # the general reader is read by its serve()


def _passages() -> list[dict]:
    with open(_glossary_path(), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def train(general_folder: Path, embedder, progress: Callable[[float, str], None] | None = None):
    """Two copies of the general reader from its folder: one is adapted, the other kept as it is for the
    table. `embedder` (a LoadedModel: the retriever Ask the corpus uses) ranks the passages."""
    from backend.engines.embedding.vectors import embed_texts

    t0 = time.perf_counter()
    splits = {s: qa_data.load(s, qa_data.GLOSSARY_DIR) for s in qa_data.GLOSSARY_SPLITS}
    general, tokenizer = reader_builder.serve(general_folder)
    model, _ = reader_builder.serve(general_folder)
    passages = _passages()

    def embed(texts: list[str]):
        return embed_texts(texts, embedder.model, embedder.tokenizer)

    with request_budget.detached():
        ranked = adaptation.rank_passages(passages, splits["validation"], embed, max(adaptation.END_TO_END_K))
        near = adaptation.rank_passages(passages, splits["train"], embed, adaptation.HARD_NEGATIVES + 1)
        info = adaptation.adapt(model, tokenizer, splits["train"], splits["validation"],
                                progress=fixed_work.first_use(progress, "the reader adapted to the glossary"),
                                retrieved=[[passages[j]["text"] for j in r] for r in ranked],
                                negatives=adaptation.hard_negatives(splits["train"], passages, near,
                                                                    adaptation.HARD_NEGATIVES))
        fixed_work.finished(info["steps"], info["total_steps"], "the adapted reader")
        say = (lambda text: progress(1.0, text)) if progress is not None else None
        table = adaptation.chapter7_table(general, model, tokenizer, splits["test"], passages, embed, say=say)
    model.config.architectures = [type(model).__name__]
    table.update({"general_reader": general_folder.name, "retriever": embedder.checkpoint,
                  "test_file": str(qa_data.GLOSSARY_DIR.name + "/test.jsonl")})
    meta = {"recipe": RECIPE, "classifier": CLASSIFIER, "trained_on": "glossary_qa train split (after qa)",
            "general_reader": general_folder.name, "null_threshold": info["null_threshold"],
            "rank_penalty": info["rank_penalty"], "read_depth": info["read_depth"],
            "validation_exact": info["validation"]["exact"], "validation_f1": info["validation"]["f1"],
            "adaptation": {k: info[k] for k in ("steps", "windows", "final_loss", "train_loop_s", "recipe", "sizes",
                                                 "hard_negatives", "unanswerable", "validation",
                                                 "validation_end_to_end", "threshold_chosen_on")},
            "build_s": round(time.perf_counter() - t0, 2)}
    return model, tokenizer, meta, table


def _saved(tmp: Path, model, tokenizer, meta: dict, table: dict) -> dict:
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / TABLE_FILE).write_text(json.dumps({**table, "build_s": meta["build_s"], "adaptation": meta["adaptation"],
                                              "null_threshold": meta["null_threshold"],
                                              "rank_penalty": meta["rank_penalty"],
                                              "read_depth": meta["read_depth"]}, indent=1))
    return meta


def ensure(base, base_location: str | Path, root: Path | None = None,
           progress: Callable[[float, str], None] | None = None) -> tuple[Path, dict]:
    """The adapted reader's folder, built now if need be. `base`: the embedder's LoadedModel (the general
    reader is trained from it, and it is the retriever the table measures) read from `base_location`."""
    folder = reader_builder.ensure(base, base_location, root, progress)[0]
    return BUILD.ensure_model(folder, root, lambda tmp: _saved(tmp, *train(folder, base, progress)))


def cached(base_location: str | Path, root: Path | None = None) -> Path | None:
    """The adapted reader's folder if it is built (and the general reader it starts from), else None."""
    folder = reader_builder.cache_dir(base_location, root)
    if not (folder / ".complete").exists():
        return None
    return BUILD.cached(folder, root)


def table(folder: Path) -> dict:
    return json.loads((Path(folder) / TABLE_FILE).read_text())


def serve(folder: str | Path, device: str = "cpu", dtype=None):
    return reader_builder.serve(folder, device, dtype)
