"""The Start tab's transformer picture (components/start/transformer.html): every part is a link to a tab of
the page with parameters that tab's link takes, and the caption defines the terms the picture shows."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import parse_qsl

from components.shell.glossary import ENTRIES
from components.start import ui as start

SVG = "{http://www.w3.org/2000/svg}"
# the link parameters each tab registers (components/*/ui.py `links.register`): a part may use only these
PARAMS = {"tokenizers": {"text", "special"}, "anatomy": {"text", "text_b", "role", "layer", "head", "token"},
          "attention": {"text", "text_b", "role", "layer", "head"}, "interventions": {"model", "text", "spec"},
          "decoding": {"prompt", "strategy", "max_new"}, "pipelines-classify": {"text"}, "search": {"query"},
          "scratch": set(), "why": set()}


def _parts() -> list[dict]:
    root = ET.fromstring(start.ARCH_HTML)
    out = []
    for a in root.iter(f"{SVG}a"):
        query = dict(parse_qsl(a.get("href").lstrip("?")))
        words = " ".join(t.text or "" for t in a.iter(f"{SVG}text"))
        out.append({"query": query, "tab": a.get("data-tab"), "part": a.get("data-part"), "words": words,
                    "title": a.find(f"{SVG}title").text})
    return out


def test_every_part_links_a_tab_with_parameters_it_takes():
    import app

    keys = {key for _, _, key, _ in app.TABS}
    parts = _parts()
    assert len(parts) >= 14 and len({p["part"] for p in parts}) == len(parts)
    for p in parts:
        tab = p["query"]["tab"]
        assert tab.split("-")[0] in keys and p["tab"] == tab.split("-")[0], p
        assert set(p["query"]) - {"tab"} <= PARAMS[tab], p
        assert p["title"].endswith(f"opens {next(t for t, _, k, _ in app.TABS if k == p['tab'])}") or \
            f"opens {next(t for t, _, k, _ in app.TABS if k == p['tab'])} (" in p["title"], p
    # both stacks: the encoder's and the decoder's attention at a layer and head, each model's own role
    roles = {(p["query"].get("tab"), p["query"].get("role")) for p in parts}
    assert {("attention", "encoder"), ("attention", "decoder"), ("anatomy", "encoder"), ("anatomy", "decoder")} <= roles
    assert all("layer" in p["query"] and "head" in p["query"] for p in parts if p["tab"] == "attention")


def test_the_caption_defines_the_parts_in_the_glossarys_terms():
    caption = re.sub(r"<[^>]+>", " ", start.ARCH_HTML.split("<figcaption", 1)[1])
    for term in ("token", "tokenizer", "embedding", "attention", "attention head", "residual stream", "feed-forward",
                 "layer", "softmax", "logit", "logit lens"):
        assert re.search(ENTRIES[term][1], caption), term  # glossary.js then defines it on hover / tap
    for p in _parts():  # each part's name is explained in the caption
        first = p["words"].split("(")[0].split("·")[0].split("+")[0].strip().split()[0]
        assert first.lower() in caption.lower(), p["words"]
    assert "javascript:" not in start.ARCH_HTML and "<script" not in start.ARCH_HTML
