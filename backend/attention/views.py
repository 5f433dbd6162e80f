"""bertviz head view and model view as self-contained, offline, injection-safe HTML.

bertviz's own `head_view(..., html_action='return')` loads require.js, d3 and jQuery from a
CDN, writes every attention value as full-precision JSON, and pastes the tokens into a
<script> with `json.dumps` (so a token `</script>` ends the script). We keep bertviz's
JavaScript (read from the installed package) and its parameter format, and change three
things:

1. require.js, d3 5.7.0 and jQuery are inlined from `assets/vendor/` and registered as named
   AMD modules, and bertviz's `require.config` (the CDN paths) is removed: no request at all.
2. The attention is sent once, as base64 of uint16 values (weight x 10000, i.e. 4 decimals),
   and expanded in the browser; sentence-pair slices are cut there too, not sent 5 times.
   That is ~2.7 bytes per value instead of ~20.
3. All JSON inside <script> escapes <, >, &, U+2028 and U+2029 (`\\u003c`...), and the
   document goes into an iframe's `srcdoc` attribute with & and quotes escaped, sandboxed
   with `allow-scripts` only (opaque origin: it cannot touch the app page).
"""

from __future__ import annotations

import base64
import html
import importlib.resources
import json
import re
import uuid
from functools import lru_cache
from pathlib import Path

import numpy as np

VENDOR_DIR = Path(__file__).resolve().parents[2] / "assets" / "vendor"
VENDOR_FILES = ("jquery-3.7.1.min.js", "d3-5.7.0.min.js", "require-2.3.8.js")
SCALE = 10000  # uint16 fixed point: 4 decimals
FONT = "font-family:'Helvetica Neue', Helvetica, Arial, sans-serif;"
PAIR_FILTERS = (
    ("All", "all", "all"),
    ("Sentence A -> Sentence A", "a", "a"),
    ("Sentence B -> Sentence B", "b", "b"),
    ("Sentence A -> Sentence B", "a", "b"),
    ("Sentence B -> Sentence A", "b", "a"),
)


def safe_json(obj) -> str:
    """JSON that is safe inside a <script> element and a JS string context."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    # ensure_ascii already writes U+2028/U+2029 as \\u2028/\\u2029; <, >, & never occur outside strings.
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@lru_cache(maxsize=None)
def _vendor_js() -> str:
    parts = []
    for name in VENDOR_FILES:
        code = (VENDOR_DIR / name).read_text(encoding="utf-8")
        if re.search(r"</script", code, re.IGNORECASE):  # would end the inline script early
            raise RuntimeError(f"{name} contains '</script' and cannot be inlined")
        parts.append(f"<script>/* {name} */\n{code}\n</script>")
    # jQuery and d3 were loaded before require.js, so they set globals; name them as AMD modules.
    parts.append(
        "<script>define('jquery', [], function () { return window.jQuery; });"
        "define('d3', [], function () { return window.d3; });</script>"
    )
    return "\n".join(parts)


@lru_cache(maxsize=None)
def _bertviz_js(view: str) -> str:
    """bertviz's view script without its CDN require.config (the modules are defined inline)."""
    code = (importlib.resources.files("bertviz") / f"{view}_view.js").read_text(encoding="utf-8")
    code, n = re.subn(r"require\.config\(\{.*?\}\);", "", code, count=1, flags=re.DOTALL)
    if n != 1 or code.count("PYTHON_PARAMS") < 1:
        raise RuntimeError(f"bertviz {view}_view.js changed shape; update backend/attention/views.py")
    if view == "head":  # the lines between the token columns take the frame's width, not 115 px
        code, n = re.subn(r"const MATRIX_WIDTH = \d+;", _HEAD_MATRIX_WIDTH, code, count=1)
        if n != 1:
            raise RuntimeError("bertviz head_view.js has no MATRIX_WIDTH; update backend/attention/views.py")
    return code


# The head view's two token columns are BOXWIDTH (110 px) each; the lines between them get the
# rest of the frame (at least bertviz's 115 px, at most 800 so the lines stay readable).
_HEAD_MATRIX_WIDTH = ("const MATRIX_WIDTH = Math.max(115, Math.min(800, "
                      "(document.documentElement.clientWidth || 0) - 2 * BOXWIDTH - 30));")


# Expands {"__tlab": {blob, shape}} and each filter's {"rows": [a, b], "cols": [c, d]} into the
# nested arrays bertviz expects: attn[layer][head][query][key].
_DECODER_JS = r"""
function tlabExpand(p) {
  var meta = p.__tlab, bin = atob(meta.blob), n = bin.length / 2;
  var vals = new Float64Array(n);
  for (var i = 0; i < n; i++) { vals[i] = (bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8)) / meta.scale; }
  var L = meta.shape[0], H = meta.shape[1], T = meta.shape[2];
  p.attention.forEach(function (entry) {
    var r = entry.attn.rows, c = entry.attn.cols, out = [];
    for (var l = 0; l < L; l++) {
      var layer = [];
      for (var h = 0; h < H; h++) {
        var head = [], base = (l * H + h) * T * T;
        for (var q = r[0]; q < r[1]; q++) {
          var row = [], off = base + q * T;
          for (var k = c[0]; k < c[1]; k++) { row.push(vals[off + k]); }
          head.push(row);
        }
        layer.push(head);
      }
      out.push(layer);
    }
    entry.attn = out;
  });
  delete p.__tlab;
  return p;
}
"""


def pack_attention(attention: np.ndarray) -> str:
    """float (L,H,T,T) in [0,1] -> base64 of little-endian uint16 (value x 10000, rounded)."""
    q = np.clip(np.rint(np.asarray(attention, dtype=np.float64) * SCALE), 0, SCALE).astype("<u2")
    return base64.b64encode(q.tobytes()).decode("ascii")


def unpack_attention(blob: str, shape) -> np.ndarray:
    """Inverse of `pack_attention` (what the browser does), for tests."""
    return np.frombuffer(base64.b64decode(blob), dtype="<u2").astype(np.float64).reshape(shape) / SCALE


def prettify(tokens: list[str]) -> list[str]:
    """bertviz's format_special_chars: byte-level/sentencepiece space markers -> spaces."""
    return [t.replace("Ġ", " ").replace("▁", " ").replace("</w>", "") for t in tokens]


def _filters(tokens: list[str], sentence_b_start: int | None) -> list[dict]:
    t = len(tokens)
    if sentence_b_start is None or not 0 < sentence_b_start < t:
        return [{"name": None, "attn": {"rows": [0, t], "cols": [0, t]}, "left_text": tokens, "right_text": tokens}]
    spans = {"all": [0, t], "a": [0, sentence_b_start], "b": [sentence_b_start, t]}
    return [
        {
            "name": name,
            "attn": {"rows": spans[left], "cols": spans[right]},
            "left_text": tokens[slice(*spans[left])],
            "right_text": tokens[slice(*spans[right])],
        }
        for name, left, right in PAIR_FILTERS
    ]


def view_params(view: str, attention: np.ndarray, tokens: list[str], sentence_b_start: int | None = None,
                layer: int | None = None, display_mode: str = "light", filters: list[dict] | None = None
                ) -> tuple[dict, str]:
    """bertviz's `params` for the head or model view (attention packed), and the root div id.
    `filters` (see `encoder_decoder_filters`) replaces the sentence-pair ones."""
    att = np.asarray(attention)
    if att.ndim != 4 or att.shape[2] != att.shape[3] or att.shape[2] != len(tokens):
        raise ValueError(f"attention must be (layers, heads, T, T) with T = {len(tokens)} tokens, got {att.shape}")
    n_layers, n_heads = att.shape[:2]
    vis_id = f"bertviz-{uuid.uuid4().hex}"
    params = {
        "attention": filters if filters is not None else _filters(prettify(tokens), sentence_b_start),
        "default_filter": "0",
        "root_div_id": vis_id,
        "include_layers": list(range(n_layers)),
        "__tlab": {"blob": pack_attention(att), "shape": list(att.shape), "scale": SCALE},
    }
    if view == "head":
        params.update({"layer": layer, "heads": None})
    elif view == "model":
        params.update({"display_mode": display_mode, "include_heads": list(range(n_heads)), "total_heads": n_heads})
    else:
        raise ValueError(f"unknown view {view!r}")
    return params, vis_id


def render_view(view: str, attention: np.ndarray, tokens: list[str], sentence_b_start: int | None = None,
                layer: int | None = None, title: str = "", filters: list[dict] | None = None) -> str:
    """A complete HTML document drawing bertviz's head or model view with no network access."""
    params, vis_id = view_params(view, attention, tokens, sentence_b_start, layer, filters=filters)
    select = ""
    if len(params["attention"]) > 1:
        options = "".join(f'<option value="{i}">{html.escape(f["name"])}</option>' for i, f in enumerate(params["attention"]))
        select = f'Attention: <select id="filter">{options}</select>'
    layer_select = 'Layer: <select id="layer"></select>' if view == "head" else ""
    script = _bertviz_js(view).replace("PYTHON_PARAMS", f"tlabExpand({safe_json(params)})", 1)
    if view == "head":  # draw once the frame has a width (a frame in a hidden tab has none yet)
        script = ("(function tlabWhenSized() {\n  if ((document.documentElement.clientWidth || 0) < 50) "
                  "{ setTimeout(tlabWhenSized, 100); return; }\n" + script + "\n})();")
    heading = f"<p style=\"{FONT}font-size:13px;margin:4px 0\">{html.escape(title)}</p>" if title else ""
    return (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"
        f"<style>body{{margin:6px;background:white;color:black;{FONT}}}</style></head><body>"
        f"{heading}"
        f"<div id=\"{vis_id}\" style=\"{FONT}\"><span style=\"user-select:none\">{layer_select} {select}</span>"
        "<div id='vis'></div></div>\n"
        f"{_vendor_js()}\n<script>{_DECODER_JS}</script>\n<script>\n{script}\n</script></body></html>"
    )


def encoder_decoder_views(encoder, decoder, cross, encoder_tokens: list[str], decoder_tokens: list[str],
                          title: str = "") -> tuple[str, str]:
    """bertviz's encoder-decoder views (what its `head_view(encoder_attention=..., decoder_attention=...,
    cross_attention=...)` draws), as two documents (head, model). The three (layers, heads, rows, cols)
    arrays go into one square array over encoder + decoder tokens, sent once; each view's select
    picks a block: cross (decoder rows x encoder columns), encoder self, decoder self."""
    enc, dec, crs = (np.asarray(a) for a in (encoder, decoder, cross))
    s, t = len(encoder_tokens), len(decoder_tokens)
    if enc.shape[2:] != (s, s) or dec.shape[2:] != (t, t) or crs.shape[2:] != (t, s):
        raise ValueError(f"shapes {enc.shape}, {dec.shape}, {crs.shape} do not match {s} encoder and {t} decoder tokens")
    att = np.zeros(enc.shape[:2] + (s + t, s + t))
    att[:, :, :s, :s], att[:, :, s:, s:], att[:, :, s:, :s] = enc, dec, crs
    e, d = prettify(encoder_tokens), prettify(decoder_tokens)
    filters = [{"name": "Cross (decoder -> encoder)", "attn": {"rows": [s, s + t], "cols": [0, s]}, "left_text": d,
                "right_text": e},
               {"name": "Encoder", "attn": {"rows": [0, s], "cols": [0, s]}, "left_text": e, "right_text": e},
               {"name": "Decoder", "attn": {"rows": [s, s + t], "cols": [s, s + t]}, "left_text": d, "right_text": d}]
    tokens = list(encoder_tokens) + list(decoder_tokens)
    head = render_view("head", att, tokens, title=f"{title} head view: pick Cross, Encoder or Decoder above; "
                       "colours are heads; hover a token to see where it looks. The decoder's rows are its inputs "
                       "(<s>, then what it wrote).", filters=filters)
    model = render_view("model", att, tokens, title=f"{title} model view: every layer (rows) and head "
                        "(columns); click a thumbnail to enlarge.", filters=filters)
    return head, model


def head_view_html(attention, tokens, sentence_b_start=None, layer=None, title="") -> str:
    return render_view("head", attention, tokens, sentence_b_start, layer, title)


def model_view_html(attention, tokens, sentence_b_start=None, title="") -> str:
    return render_view("model", attention, tokens, sentence_b_start, None, title)


def iframe(document: str, height: int = 600, title: str = "attention view") -> str:
    """The document in a sandboxed srcdoc iframe: scripts run, but with an opaque origin."""
    return (
        f'<iframe class="tlab-attention-view" title="{html.escape(title)}" sandbox="allow-scripts" '
        f'referrerpolicy="no-referrer" style="width:100%;height:{int(height)}px;border:1px solid #ddd;'
        f'border-radius:6px;background:white" srcdoc="{html.escape(document, quote=True)}"></iframe>'
    )


def head_view_height(n_tokens: int) -> int:
    """Tall enough for bertviz's token columns (22.5 px a token) plus the controls, with room
    for the title and selects to wrap onto two more lines on a phone (else the last token is cut)."""
    return int(min(max(n_tokens * 22.5 + 165, 240), 2400))


def model_view_height(n_layers: int) -> int:
    """Tall enough for every layer's row of thumbnails (about 100 px each) under the title, the
    select and the head numbers, with room for the title to wrap on a phone: a fixed 720 px cut
    the last layer off (and all but the first 6 of a 30-layer decoder's)."""
    return int(min(230 + 100 * max(1, n_layers), 3400))


def message_html(text: str) -> str:
    """A plain notice shown where a view would be (e.g. over the token cap)."""
    return f'<div class="tlab-attention-note" style="padding:12px;{FONT}">{html.escape(text)}</div>'


def tab_views(attention, tokens: list[str], sentence_b_start: int | None, checkpoint: str,
              max_tokens: int) -> tuple[str, str]:
    """The Attention tab's head and model views as iframes, or one notice for both over `max_tokens`
    (every layer x head x token^2 line would make the page unusable)."""
    t = len(tokens)
    if t > max_tokens:
        msg = (f"The text has {t} tokens; the bertviz views draw at most {max_tokens} "
               f"(every layer x head x token^2 line). Use the Heatmap and Head summary tabs, or shorten the text.")
        return message_html(msg), message_html(msg)
    head = iframe(
        head_view_html(attention, tokens, sentence_b_start,
                       title=f"{checkpoint}: head view. Colours are heads (click to toggle); "
                             "hover a token to see where it attends."),
        height=head_view_height(t), title="bertviz head view")
    model = iframe(
        model_view_html(attention, tokens, sentence_b_start,
                        title=f"{checkpoint}: model view, every layer (rows) and head (columns). "
                              "Click a thumbnail to enlarge."),
        height=model_view_height(len(attention)), title="bertviz model view")
    return head, model
