"""Which cached builds the code in this checkout would rebuild, and adopting a change that builds the same.

Each build's key covers its code (backend/hub/code_keys.py); builds cached before that keep their keys while
their code's digest is the one in backend/hub/code_keys.json. This lists each build's recorded and current
digest. After a change that provably builds the same thing (a refactor, a fix on a path the build does not
take), `--adopt RECIPE` records the current digest, so CI does not rebuild it (say why in the commit).

    .venv/bin/python scripts/code_keys.py                   # recipe, recorded, current, "rebuilds" or "kept"
    .venv/bin/python scripts/code_keys.py --adopt compress-emotion-v1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.hub import (builders, cache_build, code_keys, compress_builder, conversion,  # noqa: E402
                         corpus_reader_builder, multilingual_builder, ner_builder, reader_builder)
from backend.scratch import scaling_api  # noqa: E402

RECORD = Path(code_keys.__file__).with_name("code_keys.json")


def builds() -> dict[str, tuple[str, ...]]:
    """recipe -> the modules whose code its key covers (as the builds themselves name them)."""
    out = {m.BUILD.recipe: m.BUILD.code + (cache_build.__name__,)
           for m in (builders, ner_builder, reader_builder, corpus_reader_builder, compress_builder, multilingual_builder)}
    return {**out, scaling_api.RECIPE_NAME: scaling_api.CODE, "converted": conversion.CONVERT_CODE}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--adopt", action="append", default=[], metavar="RECIPE")
    args = p.parse_args(argv)
    table, recorded = builds(), json.loads(RECORD.read_text())
    unknown = set(args.adopt) - set(table)
    if unknown:
        p.error(f"no such build: {sorted(unknown)} (builds: {sorted(table)})")
    for recipe, modules in sorted(table.items()):
        now = code_keys.code_digest(modules)
        print(f"{recipe:<24} recorded {recorded.get(recipe, '-'):<16} now {now}  "
              f"{'kept' if recorded.get(recipe) == now else 'rebuilds'}")
        if recipe in args.adopt:
            recorded[recipe] = now
    if args.adopt:
        RECORD.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        print(f"adopted {', '.join(args.adopt)} in {RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
