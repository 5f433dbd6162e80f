"""Set-up step (`make build`): the shipped glossary embedded by each embedder the Search tab offers, so no
visitor's first search waits for it.

The English MiniLM vectors take about a second; the multilingual encoder's (multilingual-e5-small, read from
its 4-bit file) took about 78 s on a first click on a busy 2-core box. The vectors land in the search cache
(keyed by checkpoint and corpus, as every later build looks them up), and the set-up's own session is
dropped after.

    python -m backend.search.prebuild
"""

from __future__ import annotations

import time

from backend.search.api import AUTO_CORPUS, build_index, drop_session
from backend.search.embedders import ENGLISH, MULTILINGUAL

SESSION = "set-up"


def main() -> None:
    for embedder in (ENGLISH, MULTILINGUAL):
        start = time.perf_counter()
        stats = build_index(SESSION, AUTO_CORPUS, embedder=embedder)
        drop_session(SESSION)
        print(f"search: {AUTO_CORPUS} with {embedder}: {stats['count']} passages in "
              f"{time.perf_counter() - start:.1f} s ({'from the cache' if stats['embeddings_from_cache'] else 'embedded now'})", flush=True)


if __name__ == "__main__":
    main()
