"""The compress section's formatting: a planted slower variant moves the table, the scatter and
its "What to notice" line with it (the numbers on screen are the run's own)."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np

from backend.efficiency.compress import claims, report
from backend.engines.compression import perf_bench
from components.efficiency import compress_plots, compress_ui
from components.shell import notice_of
from tests.helpers.virtual_clock import VirtualClock


def _result(delays: dict, sentences: int = 400, runs: int = 20) -> dict:
    """A compress result whose variants take `delays` seconds a call (1 ms if not named), timed on a
    virtual clock that only those calls move: the table's figures are exactly the planted ones."""
    clock = VirtualClock()

    def predictor(delay):
        def predict(texts):
            clock.sleep(delay)
            return np.tile([[0.0, 1.0]], (len(texts), 1))
        return predict

    variants = [perf_bench.Variant(k, predictor(delays.get(k, 0.001)))
                for k in ("teacher", "student", "student_onnx")]
    texts = [f"t{i}" for i in range(sentences)]
    with patch.object(perf_bench, "time", clock):
        rows = perf_bench.run(variants, texts, [1] * sentences, "a", runs=runs, warmup=1)
    raw = {"rows": rows, "facts": {}, "labels": ["x", "y"]}
    table = report.rows(raw)
    return {"rows": table, "targets": report.targets(table), "notices": report.notices(table, [], {}),
            "claims": {"fastest": claims.fastest(table), "accuracy": claims.accuracy_changes(table)},
            "chosen": None, "search": [], "timings": {"benchmark": 0.1}, "source": "test", "run_id": "default",
            "threads": 1}


def test_a_planted_slow_variant_moves_the_table_and_the_plot():
    r = _result({"teacher": 0.005, "student_onnx": 0.02})
    rows = compress_ui.table_rows(r)
    onnx = next(row for row in rows if row[0] == "Student on ONNX Runtime")
    assert float(onnx[2].split(" ± ")[0]) == 20.0 and float(onnx[3].split("x")[0]) == 0.25  # 5 ms / 20 ms
    fig = compress_plots.scatter(r["rows"], r["claims"]["fastest"])
    xs = {t.name.split(" · ")[0]: t.x[0] for t in fig.data}
    assert max(xs, key=xs.get) == "Student on ONNX Runtime"
    assert notice_of(fig).startswith("Furthest left: Distilled student, 5.00x faster")
    # two within one run's noise (1.00 and 1.05 ms): neither is named the fastest, and the page says why
    tie = _result({"teacher": 0.005, "student_onnx": 0.00105})
    said = notice_of(compress_plots.scatter(tie["rows"], tie["claims"]["fastest"]))
    assert said.startswith("No variant is named the fastest: the ratio of") and "a change too small to claim" in said, said
    assert any(n.startswith("No variant is named the fastest") for n in tie["notices"])
    few = _result({"teacher": 0.005}, runs=10)  # 10 timed calls each: too few to name one
    assert "only 10 timed calls on one side" in notice_of(compress_plots.scatter(few["rows"], few["claims"]["fastest"]))
    assert "< 0.5x: **met**)" in compress_ui.summary_md(r)
    assert "< 0.5x: **not met**)" in compress_ui.summary_md(_result({"student": 0.02}))  # a slow student misses it

    fast = _result({"teacher": 0.02, "student": 0.005, "student_onnx": 0.002})  # now the baseline is the slow one
    fig = compress_plots.scatter(fast["rows"], fast["claims"]["fastest"])
    xs = {t.name.split(" · ")[0]: t.x[0] for t in fig.data}
    assert max(xs, key=xs.get) == "Fine-tuned baseline (6 layers)"
    assert notice_of(fig).startswith("Furthest left: Student on ONNX Runtime, 10.00x faster")


def test_the_pruning_curve_says_what_pruning_did_not_buy():
    curve = [{"sparsity": 0.0, "accuracy": 0.9, "latency_ms_mean": 5.0, "size_mb": 60.0, "compressed_mb": 55.0},
             {"sparsity": 0.9, "accuracy": 0.3, "latency_ms_mean": 5.1, "size_mb": 60.0, "compressed_mb": 20.0}]
    line = notice_of(compress_plots.pruning(curve))
    assert "90% zeros" in line and "30.0%" in line and "same size" in line and "55.0 -> 20.0 MB" in line
    assert compress_ui._next("teacher") == "distil" and compress_ui._next("prune") == "prune"


def test_a_compress_link_restores_its_settings_in_the_efficiency_tab_and_blanks_the_old_result():
    import gradio as gr

    from components.efficiency import compress_ui
    from components.shell import links

    links.reset()
    links.known_tabs(["efficiency"])
    with gr.Blocks():
        with gr.Tabs() as tabs:
            with gr.Tab("Efficiency", id="efficiency"):
                compress_ui.build()
    link = links.registered()["efficiency-compress"]
    assert [p.name for p in link.params] == ["run", "through", "temperature", "alpha", "layers", "sparsity", "epochs"]
    query = {"tab": "efficiency-compress", "run": "custom", "temperature": "6", "alpha": "2", "layers": "3",
             "sparsity": "0.7", "epochs": "9", "through": "no-such-step"}
    key, values, _ = links.decode(query)
    assert key == "efficiency-compress" and values["run"] == "custom" and values["temperature"] == 6
    assert values["alpha"] == 1 and values["epochs"] == 6  # clipped to the sliders' ranges
    assert "through" not in values  # not one of the steps: left as it is
    out = links.updates(key, values, [])
    assert out[0]["selected"] == "efficiency" and len(out) == len(links.outputs(tabs))
    assert out[-len(link.results) - len(links._MODEL_BOXES):][:len(link.results)] == [None] * len(link.results)


def test_the_section_opens_on_the_default_run_whole_with_its_settings_in_the_controls(monkeypatch):
    import gradio as gr

    from backend.efficiency import compress
    from backend.runtime.errors import InputError
    from components.shell import links

    built = {**_result({"teacher": 0.005}), "pruning": [], "model": None,
             "controls": {"temperature": 2.0, "alpha": 0.1, "layers": 2, "sparsity": 0.9, "epochs": 3,
                          "sparsities": [0.3, 0.5, 0.7, 0.9]}}
    asked = []
    monkeypatch.setattr(compress, "default_run", lambda through="all": asked.append(through) or built)
    links.reset()
    links.known_tabs(["efficiency"])
    with gr.Blocks():
        compress_ui.build()
    assert asked == ["all"]  # the whole run, not its first step
    params = {p.name: p.component for p in links.registered()["efficiency-compress"].params}
    assert params["through"].value == "all" and params["run"].value == "default"
    assert (params["temperature"].value, params["alpha"].value, params["layers"].value, params["epochs"].value) == \
        (2.0, 0.1, 2, 3)  # what the default run used (its search chose alpha 0.1), not the API's 0.5
    assert "30%, 50%, 70%, 90%" in params["sparsity"].label
    results = links.registered()["efficiency-compress"].results
    table = next(c for c in results if isinstance(c, gr.Dataframe))
    assert [row[0] for row in table.value["data"]] == [r["variant"] for r in built["rows"]]
    assert "Student" in next(c for c in results if getattr(c, "elem_id", "") == "compress-summary").value
    assert compress_ui._next("all") == "distil"  # Next step from the whole run starts the walk again

    for error in (InputError("not built"), ValueError("a damaged results file")):
        def missing(through="all", error=error):
            raise error
        monkeypatch.setattr(compress, "default_run", missing)
        links.reset()
        links.known_tabs(["efficiency"])
        with gr.Blocks():
            compress_ui.build()  # not built yet (or damaged): the page opens empty, a click runs it
        params = {p.name: p.component for p in links.registered()["efficiency-compress"].params}
        assert params["through"].value == "all" and params["alpha"].value == compress.DEFAULT_ALPHA
