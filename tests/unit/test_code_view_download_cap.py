"""A visitor's notebooks fit under the download cap (backend/snippets/notebook.py KEEP_BYTES): the page's writer
(`notebook_file`, the code view's Download) writes each run's notebook into a folder of the address that made it;
an address's notebooks together stay under KEEP_BYTES, the oldest going first, and never touch another
address's; and a button whose notebook is gone says so in the page's own words (code_view.GONE)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from backend import snippets
from backend.runtime import clients, downloads
from components.shell import code_view

# a search on the shipped glossary: the heaviest notebook a visitor makes (the corpus is in its data cell)
SEARCH = {"endpoint": "search", "client": "print('client')",
          "python": "passages = open('assets/corpus/glossary.jsonl', encoding='utf-8').read().splitlines()"}
SMALL = {"endpoint": "tokenize", "python": "print('tokens')", "client": "print('client')"}
ADDRESSES = ("203.0.113.7", "198.51.100.9", "192.0.2.44")


def _write(root, snippet: dict, address: str, n: int, clock: list[int]) -> list:
    """`n` notebooks of one address, each a second younger than the last (an order the clock cannot blur)."""
    made = []
    with clients.serving(address):
        for _ in range(n):
            path = snippets.notebook_file(snippet, {"query": "x", "k": 4}, root)
            clock[0] += 1
            os.utime(path.parent, (clock[0], clock[0]))
            made.append(path)
    return made


def _held(root, address: str) -> int:
    tag = downloads._tag(address)
    return sum(downloads.folder_bytes(p) for p in root.glob(f"{downloads.PREFIX}notebook-{tag}-*"))


def test_one_address_keeps_its_newest_notebooks_under_the_cap(tmp_path):
    clock = [1000]
    made = _write(tmp_path, SEARCH, ADDRESSES[0], 80, clock)
    assert made[-1].stat().st_size > 50_000  # the corpus is in its data cell: the cap is reached in a few dozen runs
    kept = [p for p in made if p.exists()]
    assert _held(tmp_path, ADDRESSES[0]) <= snippets.NOTEBOOK_KEEP_BYTES
    assert 10 < len(kept) < len(made)  # many stay downloadable, not all
    assert kept == made[-len(kept):]  # the oldest went first; every newer one still downloads
    small = _write(tmp_path, SMALL, ADDRESSES[0], 5, clock)  # small runs after them push out only what they need
    assert all(p.exists() for p in small) and _held(tmp_path, ADDRESSES[0]) <= snippets.NOTEBOOK_KEEP_BYTES
    assert made[-1].exists()


def test_several_addresses_each_keep_their_own_under_the_cap(tmp_path):
    clock, made = [1000], {}
    for round_ in range(3):  # interleaved: one address's runs never evict another's
        for address in ADDRESSES:
            made.setdefault(address, []).extend(_write(tmp_path, SEARCH, address, 20, clock))
    for address in ADDRESSES:
        kept = [p for p in made[address] if p.exists()]
        assert _held(tmp_path, address) <= snippets.NOTEBOOK_KEEP_BYTES, address
        assert kept and kept == made[address][-len(kept):], address
        assert all(clients.owner_of(str(p)) == address for p in kept)
    total = downloads.held_bytes(tmp_path)
    assert total <= len(ADDRESSES) * snippets.NOTEBOOK_KEEP_BYTES


@pytest.mark.parametrize("status, says", [(404, code_view.GONE), (403, code_view.GONE), (200, "")])
def test_a_stale_button_shows_the_pages_line_for_a_gone_notebook(status, says):
    """GONE_JS, the Download button's page-side listener, run by node with the browser's fetch answering as the
    server does for a notebook that went (Gradio: 404 once the file is deleted, 403 once it is no longer allowed)."""
    script = ("const fn = " + code_view.GONE_JS + ";\n"
              f"globalThis.fetch = async () => ({{ok: {str(status == 200).lower()}, status: {status}}});\n"
              "fn({url: '/gradio_api/file=.cache/tlab-downloads/tlab-notebook-x/decode.ipynb'})"
              ".then(r => process.stdout.write(JSON.stringify(r)));")
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30, check=True).stdout
    assert json.loads(out) == says
    assert "Press the tab's run button again" in code_view.GONE
    assert f"{snippets.NOTEBOOK_KEEP_BYTES / 2**20:.0f} MB" in code_view.GONE
