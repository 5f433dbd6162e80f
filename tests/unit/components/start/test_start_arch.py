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


def _box(el) -> tuple[float, float, float, float]:
    x, y = float(el.get("x")), float(el.get("y"))
    return x, y, x + float(el.get("width")), y + float(el.get("height"))


def _inside(point, box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def test_the_decoder_only_stack_draws_no_cross_attention():
    """SmolLM2 is decoder-only: no part inside its stack is cross-attention, and no line from the encoder
    ends inside it; cross-attention is drawn outside both stacks and says it is for encoder-decoder models."""
    root = ET.fromstring(start.ARCH_HTML)
    heads = {t.text: float(t.get("x")) for t in root.iter(f"{SVG}text") if "tlab-arch-head" in (t.get("class") or "")}
    decoder_x = next(x for words, x in heads.items() if words.startswith("Decoder (SmolLM2"))
    stacks = [_box(r) for r in root.iter(f"{SVG}rect") if r.get("class") == "tlab-arch-stack"]
    decoder = next(b for b in stacks if b[0] <= decoder_x <= b[2])
    for a in root.iter(f"{SVG}a"):
        box = _box(a.find(f"{SVG}rect"))
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        words = " ".join(t.text or "" for t in a.iter(f"{SVG}text")).lower()
        if _inside(centre, decoder):
            assert "cross" not in words and a.get("data-part") != "cross-attention", words
        if a.get("data-part") == "cross-attention":
            assert not any(_inside(centre, b) for b in stacks) and "enc-dec models only" in words, words
    for path in root.iter(f"{SVG}path"):
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path.get("d"))]
        if len(numbers) >= 4 and path.get("d").startswith("M"):
            assert not _inside((numbers[-2], numbers[-1]), decoder), path.get("d")
    assert "SmolLM2 is decoder-only" in start.ARCH_HTML
