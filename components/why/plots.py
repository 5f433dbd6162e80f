"""The Why tab's views, from /attribute's plain result: the heat strip (HTML), the table rows,
the deletion curves and the agreement matrix (Plotly, each with its "What to notice" line)."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from components.shell import notice

COLORS = {"gradient_x_input": "#9467bd", "integrated_gradients": "#1f77b4", "occlusion": "#d62728",
          "attention_rollout": "#2ca02c", "last_layer_attention": "#8c8c8c"}
SHORT = {"gradient_x_input": "grad x input", "integrated_gradients": "integrated grad.", "occlusion": "occlusion",
         "attention_rollout": "rollout", "last_layer_attention": "last-layer attention"}


SIGNLESS = ("attention_rollout", "last_layer_attention")


def _shade(value: float, peak: float, signed: bool = True) -> str:
    """Red for a token that raises the output, blue for one that lowers it, green for a signless share; the
    strength is |value| / peak, `peak` the stated reference (never a row's own largest score)."""
    a = 0.0 if peak <= 0 else min(1.0, abs(value) / peak)
    rgb = ("214,39,40" if value >= 0 else "31,119,180") if signed else "44,160,44"
    return f"rgba({rgb},{0.08 + 0.72 * a:.2f})"


def _peak(r: dict, method: str, scores: list) -> float:
    """What full colour means for a method: the change explained (signed methods, `checks.scale`), or the
    row's total (a signless share)."""
    if method in SIGNLESS:
        return float(sum(abs(v) for v in scores))
    ref = (r.get("checks") or {}).get("scale", {}).get("reference")
    return float(ref) if ref else max((abs(v) for v in scores), default=0.0)


def heat_strip(r: dict) -> str:
    """One line of the text per method, each token's background shaded by its score (escaped); an explained
    token that is not scored (NER's tagged word) is outlined where it stands."""
    text_parts = []
    focus = (r.get("prediction") or {}).get("focus") or {}
    for m in r["methods"]:
        scores = r["scores"][m]
        peak = _peak(r, m, scores)
        spans, part, marked = [], None, not focus.get("why_not_scored")
        for tok, v in zip(r["tokens"], scores):
            if not marked and tok.get("index", -1) > focus.get("index", -1):
                spans.append(_focus_span(focus))
                marked = True
            if tok.get("part") and tok["part"] != part:  # QA: the question's tokens, then the context's
                part = tok["part"]
                spans.append(f"<span class='why-part'>{html.escape(part)}:</span>")
            shown = f"{v:.1%} of the row" if m in SIGNLESS else f"{v:+.4g}"
            spans.append(f"<span class='why-tok' style='background:{_shade(v, peak, m not in SIGNLESS)}' "
                         f"title='{html.escape(tok['token'])}: {shown}'>{html.escape(tok['token'])}</span>")
        if not marked:
            spans.append(_focus_span(focus))
        label = html.escape(r["method_words"][m]) + (" <span class='why-nosign'>(no sign)</span>" if m in SIGNLESS else "")
        text_parts.append(f"<div class='why-row'><div class='why-method'>{label}</div>"
                          f"<div class='why-tokens'>{' '.join(spans)}</div></div>")
    scale = ((r.get("checks") or {}).get("scale") or {}).get("text") or ""
    legend = ("<div class='why-legend'>Red: the token raises the explained quantity; blue: it lowers it. "
              + html.escape(scale) + "</div>")
    return f"<div class='why-strip'>{legend}{''.join(text_parts)}</div>"


def _focus_span(focus: dict) -> str:
    return (f"<span class='why-tok why-focus' title='the explained token: not scored'>"
            f"{html.escape(str(focus.get('token', '')))}</span>")


STRIP_CSS = """
.why-strip { font-size: 0.95rem; line-height: 1.9; }
.why-row { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; margin-bottom: 0.4rem; }
.why-method { min-width: 11rem; font-weight: 600; }
.why-tokens { flex: 1 1 20rem; overflow-wrap: anywhere; }
.why-tok { padding: 0.05rem 0.15rem; border-radius: 3px; white-space: pre; }
.why-part { font-size: 0.8rem; font-style: italic; opacity: 0.7; margin-left: 0.4rem; }
.why-legend { font-size: 0.85rem; opacity: 0.8; margin-bottom: 0.4rem; }
.why-focus { outline: 2px solid currentColor; font-weight: 600; }
.why-nosign { font-weight: 400; font-size: 0.8rem; opacity: 0.75; }
@media (max-width: 640px) { .why-method { min-width: 100%; } }
"""


def table_rows(r: dict) -> tuple[list[str], list[list]]:
    part = any("part" in t for t in r["tokens"])  # QA: say which text each token is from
    headers = (["part"] if part else []) + ["token"] + [SHORT[m] + (" (no sign)" if m in SIGNLESS else "")
                                                      for m in r["methods"]]
    # four significant digits: a score of 1e-4 is not rounded to 0 next to one of 0.9
    rows = [([t.get("part")] if part else []) + [t["token"]] + [float(f"{r['scores'][m][i]:.4g}") for m in r["methods"]]
            for i, t in enumerate(r["tokens"])]
    return headers, rows


def deletion_figure(r: dict) -> go.Figure:
    dl = r["checks"].get("deletion")
    fig = go.Figure()
    if not dl:
        return fig
    x = dl["removed"]
    for m, curve in dl["curves"].items():
        dash = "dot" if m not in r["explanations"] else "solid"
        fig.add_trace(go.Scatter(x=x, y=curve, mode="lines+markers", name=SHORT[m],
                                 line=dict(color=COLORS[m], dash=dash)))
    fig.add_trace(go.Scatter(x=x, y=dl["random_mean"], mode="lines", name=f"random (mean of {dl['random_orders']})",
                             line=dict(color="black", width=3, dash="dash")))
    fig.update_layout(title="Deletion test: remove the top tokens first", xaxis_title="tokens removed",
                      yaxis_title=r["quantity"][:60], template="plotly_white", height=380,
                      margin=dict(l=60, r=20, t=50, b=50), legend=dict(orientation="h", y=-0.25, x=0))
    return notice(fig, deletion_notice(r))


def deletion_notice(r: dict) -> str:
    dl = r["checks"].get("deletion") or {}
    ranking = dl.get("ranking") or []
    if not ranking:
        return ""
    best = ranking[0]
    area = dl["area_over_random"]
    k = dl["top_k"]
    said = (f"Removing the top {k} tokens by {SHORT[best]} changes the {r['quantity']} by "
            f"{-dl['top_k_drop'][best]:+.3f}, against {-dl['random_top_k_drop']:+.3f} for random tokens; "
            f"{SHORT[best]} has the largest area over random ({area[best]:.3f})")
    worse = [m for m in ranking if area[m] <= 0]
    if worse:
        said += f"; {', '.join(SHORT[m] for m in worse)} did no better than random here"
    claim = r["checks"].get("faithfulness") or {}
    if claim and claim.get("method") != best:
        said += ("; named most faithful: " + SHORT[claim["method"]] if claim.get("method")
                 else "; no method is named most faithful (see the summary)")
    return said + "."


def agreement_figure(r: dict) -> go.Figure:
    ag = r["checks"].get("agreement")
    fig = go.Figure()
    if not ag:
        return fig
    names = [SHORT[m].replace(" ", "<br>", 1) for m in ag["methods"]]  # two lines: the cells keep the width
    z = [[(v if v is not None else 0.0) for v in row] for row in ag["spearman"]]
    # short cell text at a fixed size (a phone's cells are ~28 px wide: "top-3 100%" was shrunk to 3 px)
    text = [[("n/a" if v is None else f"{v:.2f}") + f"<br>{o:.0%}" for v, o in zip(row, orow)]
            for row, orow in zip(ag["spearman"], ag["top_k_overlap"])]
    fig.add_trace(go.Heatmap(z=z, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", reversescale=True,
                             text=text, texttemplate="%{text}", textfont=dict(size=10),
                             hovertemplate="%{y} vs %{x}: %{text}<extra></extra>",
                             colorbar=dict(title="Spearman", thickness=10)))
    fig.update_layout(title=f"Do the methods agree? (each cell: rank correlation, then top-{ag['top_k']} overlap)",
                      template="plotly_white", height=420, margin=dict(l=20, r=10, t=50, b=20),
                      yaxis=dict(autorange="reversed", automargin=True), xaxis=dict(automargin=True))
    return notice(fig, agreement_notice(r))


def agreement_notice(r: dict) -> str:
    ag = r["checks"].get("agreement") or {}
    names = ag.get("methods") or []
    pairs = [(ag["spearman"][i][j], names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))
             if ag["spearman"][i][j] is not None]
    if not pairs:
        return ""
    hi, lo = max(pairs), min(pairs)
    return (f"Closest pair: {SHORT[hi[1]]} and {SHORT[hi[2]]} (Spearman {hi[0]:.2f}); furthest: "
            f"{SHORT[lo[1]]} and {SHORT[lo[2]]} ({lo[0]:.2f}).")
