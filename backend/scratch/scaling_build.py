"""`python -m backend.scratch.scaling_build [--ship]`: train chapter 11's default scaling-law family
into the model cache once (`make build` runs it; skipped at once when the cache holds it).

`--ship` also copies the result to assets/data/scratch/scaling_family.json, the copy a Space
reads when its cache lacks the family."""

from __future__ import annotations

import argparse
import shutil
import sys
import time

from backend.scratch import scaling, scaling_api


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ship", action="store_true", help="also write the shipped copy in assets/")
    args = p.parse_args(argv)
    start = time.perf_counter()
    sizes = ", ".join(f"{layers}x{width}" for layers, width in scaling.FAMILY)
    print(f"scaling family ({sizes}; {scaling.RECIPE.tokens:,} tokens each): training once", flush=True)
    path, now = scaling_api.build(say=lambda line: print(line, flush=True))
    print(f"ready   scaling family: {'trained' if now else 'already built'} in {time.perf_counter() - start:.1f} s "
          f"-> {path}", flush=True)
    if args.ship:
        shutil.copyfile(path, scaling_api.SHIPPED)
        print(f"shipped {scaling_api.SHIPPED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
