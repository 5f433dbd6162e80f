"""Figures: every Plotly figure carries its "What to notice" line and PNG / SVG downloads.

The browser side lives in components/shell/assets/figures.js and figures.css (real files, not strings).
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from components.shell.errors import md_text

ASSETS = Path(__file__).resolve().parent / "assets"
# ---------------------------------------------------------------- figures: what to notice, and keep them
# Every Plotly figure gets, under it, a visible "PNG" / "SVG" pair (Plotly.downloadImage, drawn in
# the browser: no server, no network) and its "What to notice" line. The line travels inside the
# figure (`layout.meta.notice`, set by `notice()` where the figure is built from the result), so a
# plots module says it once and no tab wires an extra output. `figure_tools()` is placed once per
# page (app.py); its script watches the page for plots as Gradio draws and redraws them.
NOTICE_PREFIX = "What to notice: "

FIGURE_JS = (ASSETS / "figures.js").read_text()
PHONE_PX = 760  # at this width and below, tables keep whole words and scroll inside themselves
PLOT_MIN_PX = 220  # a plot area a tall legend or wrapped title squeezed below this grows the figure (figures.js)

FIGURE_CSS = (ASSETS / "figures.css").read_text()


def notice(fig, text: str):
    """Attach a figure's "What to notice" line (shown under it by figure_tools' script) and
    return the figure. Write it from the figure's own data: it must be true for this result."""
    if fig is None or not text:
        return fig
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    fig.update_layout(meta={**meta, "notice": str(text)})
    return fig


def legend_below(fig, title: str | None = None):
    """The legend in rows under the x axis's title, anchored to the figure's bottom (Plotly grows the bottom
    margin to hold it, so it covers no tick label or axis title at any width; a legend at a fixed paper
    position slid over the axis title on a phone, or past the figure's edge), its title above its entries;
    figures.js then grows a figure whose plot a tall legend squeezed. Returns the figure."""
    legend = dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left")
    if title:
        legend["title"] = dict(text=title, side="top")
    fig.update_layout(legend=legend)
    return fig


def notice_of(fig) -> str:
    """The "What to notice" line a figure carries ('' when none)."""
    meta = getattr(getattr(fig, "layout", None), "meta", None)
    return meta.get("notice", "") if isinstance(meta, dict) else ""


def figure_tools() -> gr.HTML:
    """Place once per page: PNG / SVG buttons and the "What to notice" line under every plot
    (its CSS goes into the page head: it styles elements outside this component)."""
    return gr.HTML("", js_on_load=FIGURE_JS.replace("__PREFIX__", NOTICE_PREFIX).replace("__PHONE__", str(PHONE_PX))
                   .replace("__PLOT_MIN__", str(PLOT_MIN_PX)),
                   head=f"<style>{FIGURE_CSS}</style>", elem_id="tlab-figure-tools", visible="hidden")


def notice_line(text: str) -> str:
    """A "What to notice" line as Markdown, for a figure that is not a plot (chips, a table)."""
    return f"**{NOTICE_PREFIX.strip()}** {md_text(text)}" if text else ""
