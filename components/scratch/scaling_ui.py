"""From scratch tab, chapter 11: a scaling law measured on this machine. The default family of tiny
GPTs (built once at set-up) and its power-law fit; a learner adds a size and sees where it lands
against the line and its 95 % prediction interval."""

from __future__ import annotations

import gradio as gr

from backend.scratch.contracts import CONTRACTS
from backend.scratch import scaling, scaling_api
from components import shell as common
from components.shell import SHORT_LANE, Dropdown, Slider, error_box, md_text, raw_json
from components.shell.endpoint import Endpoint, declare
from components.scratch.ch11_plots import compute_figure, scaling_figure

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
WIDTHS = [16, 32, 48, 64, 80, 96, 112, 128, 160, 192]
_SMALL, _BIG = scaling.FAMILY[0], scaling.FAMILY[-1]
INTRO = (
    "### Chapter 11: a scaling law, measured here\n"
    "The book's last chapter reports that a language model's loss falls as a **power law** of its size: "
    f"L(N) = (N_c / N)^alpha, with alpha ≈ {scaling.KAPLAN_ALPHA_N} for non-embedding parameters N (Kaplan et al., "
    f"2020). Here a family of the tiny GPTs above, from {_SMALL[0]} layer{'s' if _SMALL[0] > 1 else ''} x {_SMALL[1]} "
    f"to {_BIG[0]} layers x {_BIG[1]}, was trained with **one recipe** (the same shipped text, byte tokens, "
    f"{scaling.RECIPE.tokens:,} training tokens, learning-rate schedule and seed), so only N changes. The fit and "
    "its interval come from those runs; add a size of your own and see whether it lands where the law says.")
TABLE_HEADERS = ["size (layers x width)", "non-embedding N", "all parameters", "validation loss", "seconds"]
TABLE_WIDTHS = ["22%", "20%", "20%", "20%", "18%"]


def summary_md(law: dict) -> str:
    fit, plain, k = law["fit"], law["plain_fit"], law["kaplan_alpha"]
    r = law["recipe"]
    where = ("inside" if plain["alpha_low"] <= k <= plain["alpha_high"] else
             "above" if plain["alpha_high"] < k else "below")  # where Kaplan's value lies, against our interval
    floor = fit["floor_fit"]
    lines = [
        f"**alpha = {fit['alpha']:.3f}** (95 % interval {fit['alpha_low']:.3f} to {fit['alpha_high']:.3f}, from the "
        f"fit's covariance with {fit['dof']} degrees of freedom) for L(N) = {md_text(fit['model'])} over "
        f"{len(law['runs'])} sizes spanning {law['span']:g}x in non-embedding parameters. Kaplan's {k} is **{where}** "
        "the interval.",
        f"An irreducible loss E was tried too (L = E + (N_c/N)^alpha: E = {floor['floor']:.3f}, alpha = "
        f"{floor['alpha']:.3f}); " + ("the data ask for it (its AICc is lower by more than 2), so it is the fit above."
                                      if fit["model"].startswith("E") else
                                      "with this few sizes its third parameter costs more than it explains (AICc), "
                                      "so the plain power law is kept."),
        f"Recipe: {r['steps']} steps x batch {r['batch']} x context {r['context']} "
        f"({r['steps'] * r['batch'] * r['context']:,} tokens) on every shipped text, learning rate {r['learning_rate']:g} "
        f"with warm-up and cosine decay, seed {r['seed']}; validation loss on the same {r['val_windows']} windows of "
        f"{r['context']} held-out bytes for every size. Source: {md_text(law['source'])}"
        + (f", {law['build_seconds']:.0f} s of training." if law.get("build_seconds") else "."),
        "**Where toy scale departs from Kaplan's:** these models see about 200 thousand tokens, not billions, "
        f"and stop while still learning: {still_learning(law)}; so the recipe, not only the size, sets each loss, "
        "and the measured alpha is " + ("smaller" if fit["alpha"] < k else "not smaller")
        + " than Kaplan's; the tokens are bytes, not a 50k-word BPE vocabulary; and a single seed per size leaves "
        "run-to-run scatter in every point, which the interval carries.",
    ]
    return "\n\n".join(lines)


def still_learning(law: dict) -> str:
    f = scaling_api.still_learning(law["runs"])
    return (f"over its last {f['steps']} steps the largest size's validation loss still fell by {f['largest']:.3f} "
            f"nats, the smallest's by {f['smallest']:.3f}")


def runs_table(law: dict) -> dict:
    rows = [[f"{r['layers']} x {r['width']}", f"{r['non_embedding']:,}", f"{r['parameters']:,}",
             f"{r['val_loss']:.4f}", f"{r['seconds']:.1f}"] for r in law["runs"]]
    return gr.update(value={"data": rows, "headers": TABLE_HEADERS}, column_widths=TABLE_WIDTHS)


def show_law():
    """/scaling_law: the default family's runs and the fitted power law (JSON)."""
    law = scaling_api.scaling_law()
    return summary_md(law), scaling_figure(law), compute_figure(law), runs_table(law), law


def placed_md(result: dict) -> str:
    r, p = result["run"], result["predicted"]
    verdict = ("**inside** the 95 % prediction interval: the law predicted this size." if result["inside"] else
               "**outside** the 95 % prediction interval: the law did not predict this size.")
    where = (" It lies outside the family's range, so the line is extrapolated there and the interval widens."
             if result["extrapolated"] else " It lies inside the family's range (an interpolation).")
    if not result["inside"]:
        shapes = [f["width"] / f["layers"] for f in result.get("family", [])]
        odd = shapes and not min(shapes) <= r["width"] / r["layers"] <= max(shapes)
        where += (" Why it may miss: " + ("its shape (width per layer "
                                          f"{r['width'] / r['layers']:g}) lies outside the family's "
                                          f"({min(shapes):g} to {max(shapes):g}), and at this scale shape matters "
                                          "beside N; " if odd else "")
                  + "one seed per size; and a 95 % interval leaves 1 size in 20 outside by chance.")
    return (f"Your **{r['layers']} layer{'s' if r['layers'] != 1 else ''} x {r['width']}** (N = {r['non_embedding']:,}) reached validation loss "
            f"**{r['val_loss']:.4f}** in {r['seconds']:.1f} s; the fit predicted {p['loss']:.4f} "
            f"({p['low']:.4f} to {p['high']:.4f}). It landed {verdict}{where}")


def add_size(layers=3, width=64):
    """/scaling_add: train one more size with the family's recipe and place it against the fitted line."""
    skip = gr.update()
    for ev in scaling_api.scaling_add_iter(layers, width):
        if ev["event"] == "plan":
            yield (f"*Training {ev['layers']} layers x {ev['width']} ({ev['parameters']:,} parameters, about "
                   f"{ev['seconds']:.0f} s); Stop ends it.*", skip, skip)
        elif ev["event"] == "eval":
            yield f"*Step {ev['step']:,}: validation loss {ev['val_loss']:.4f}*", skip, skip
        else:
            result = ev["result"]
            yield placed_md(result), scaling_figure(scaling_api.scaling_law(), added=result), result


def build() -> None:
    gr.Markdown(INTRO, elem_id="scaling-intro")
    show = gr.Button("Show the measured scaling law", variant="primary", elem_id="scaling-go")
    box = error_box(elem_id="scaling-error")
    summary = gr.Markdown(elem_id="scaling-summary")
    with gr.Row():
        by_size = gr.Plot(label="Loss against size", elem_id="scaling-plot")
        by_compute = gr.Plot(label="Loss against compute", elem_id="scaling-compute")
    table = gr.Dataframe(headers=TABLE_HEADERS, column_widths=TABLE_WIDTHS, wrap=True, label="The family's runs",
                         elem_id="scaling-runs")
    law_json = raw_json("Raw result (JSON: what /scaling_law returns)", elem_id="scaling-json")
    declare(Endpoint("scaling_law", show_law, {}, [summary, by_size, by_compute, table, law_json], trigger=show,
                     errors=box, contract=CONTRACTS["scaling_law"]))
    gr.Markdown("**Add a size.** Same recipe, your layers and width; its point lands on the plot with the "
                "interval the fit predicted for it.", elem_id="scaling-add-intro")
    with gr.Row():
        layers = Slider(1, 6, value=3, step=1, label="Layers", elem_id="scaling-layers")
        width = Dropdown(WIDTHS, value=64, label="Width (a multiple of 4 heads)", elem_id="scaling-width")
        add = gr.Button("Train this size and place it", variant="primary", elem_id="scaling-add")
        stop = gr.Button("Stop", variant="stop", elem_id="scaling-stop")
    add_box = error_box(elem_id="scaling-add-error")
    placed = gr.Markdown(elem_id="scaling-placed")
    add_json = raw_json("Raw result (JSON: what /scaling_add returns)", elem_id="scaling-add-json")
    (ev,) = declare(Endpoint("scaling_add", add_size, {"layers": layers, "width": width}, [placed, by_size, add_json],
                             trigger=add, lane=LANE, errors=add_box, cleared=[placed, add_json], contract=CONTRACTS["scaling_add"]))
    stop.click(None, None, None, cancels=[ev], queue=False, api_visibility="private")
