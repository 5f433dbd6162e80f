"""Below the browser: every figure's "What to notice" line is
computed from the figure's own data; semicolon CSVs are read as columns; the Train tab's link
carries its settings (never an upload); the Decoding comparison's picker builds the JSON."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from components.shell import notice, notice_of


def test_notice_rides_in_the_figure_and_keeps_other_meta():
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.update_layout(meta={"keep": 1})
    assert notice_of(notice(fig, "b is three times a.")) == "b is three times a."
    assert fig.layout.meta["keep"] == 1
    assert json.loads(fig.to_json())["layout"]["meta"]["notice"] == "b is three times a."  # what gr.Plot sends
    assert notice(None, "x") is None and notice_of(go.Figure()) == ""


def test_decoding_notices_quote_the_figures_numbers():
    from components.decoding import plots as P

    dist = {"tokens": [" the", " a"], "step": 1, "vocab_size": 100,
            "temperatures": [{"temperature": 2.0, "probs": [0.3, 0.2], "entropy": 3.1},
                             {"temperature": 0.5, "probs": [0.9, 0.05], "entropy": 0.4}],
            "cumulative": {"ranks": list(range(1, 13)), "cumulative": [0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.84, 0.87, 0.9,
                                                                 0.95, 1.0],
                           "top_p": 0.9, "temperature": 1.0, "top_k": 0, "cut_rank": 10}}
    t = notice_of(P.temperature_figure(dist))
    assert "'␣the' takes 90% of the probability at T = 0.5 but 30% at T = 2" in t and "0.40 → 3.10" in t
    c = notice_of(P.cumulative_figure(dist, "sample"))
    assert "top 10 token(s) of 100 already hold 90%" in c and "first 10" in c
    assert "first" not in notice_of(P.cumulative_figure(dist, "greedy"))
    rows = [{"strategy": "greedy", "sequence_logprob": -4.0, "n_new_tokens": 8, "distinct_2": 0.5},
            {"strategy": "sample", "sequence_logprob": -16.0, "n_new_tokens": 8, "distinct_2": 1.0}]
    assert "'greedy' has the highest mean log-prob per token (-0.50); 'sample' repeats itself least (distinct-2 1.00)" \
        in notice_of(P.compare_figure(rows))
    nodes = [{"id": 0, "depth": 0, "cum_logprob": 0.0, "status": "root", "best": True, "token": "", "logprob": 0},
             {"id": 1, "depth": 1, "cum_logprob": -1.0, "status": "kept", "best": True, "token": "a", "parent": 0,
              "logprob": -1.0},
             {"id": 2, "depth": 1, "cum_logprob": -3.0, "status": "pruned", "best": False, "token": "b", "parent": 0,
              "logprob": -3.0}]
    b = notice_of(P.beam_tree_figure({"nodes": nodes, "steps": 1}))
    assert "weighed 2 hypotheses and pruned 1" in b and "ends at step 1 with log-probability -1.00" in b
    growth = {"tokens": ["A", "B", "C", "D"], "prompt_len": 2, "layer": 0, "head": "mean",
              "rows": [[0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.5, 0.0]]}
    assert "put 50% of its attention on the prompt" in notice_of(P.growth_figure(growth))


def test_train_notices_name_the_best_method_its_mistake_and_the_curve():
    from components.train import plots as P

    conf = lambda z: {"labels": ["joy", "sadness"], "normalised": z}  # noqa: E731
    methods = {"zero_shot": {"accuracy": 0.5, "confusion": conf([[0.5, 0.5], [0.5, 0.5]])},
               "probe": {"accuracy": 0.75, "confusion": conf([[1.0, 0.0], [0.4, 0.6]])}}
    fig = P.confusion_figure(methods)
    n = notice_of(fig)
    assert n.startswith("No method is named the most accurate: no ranking was made (test accuracy: zero-shot "
                        "(similarity) 0.50, features + logistic regression 0.75)")  # a ranking is the backend's
    assert "40% of the 'sadness' examples predicted as 'joy'" in n
    titles = [a.text for a in fig.layout.annotations]
    assert all(len(line) <= 20 for t in titles for line in t.split("<br>")), titles  # each fits its third
    curve = {"sizes": [8, 16], "examples": [16, 32], "probe": [0.4, 0.7], "zero_shot": [0.5, 0.5]}
    assert "goes from 0.40 with 8 to 0.70 with 16 examples per label; zero-shot needs no examples and stays at 0.50" \
        in notice_of(P.curve_figure(curve))
    m = {"x": [0, 0.1, 5, 5.1], "y": [0, 0, 5, 5], "labels": ["a", "a", "b", "b"], "texts": ["t"] * 4,
         "method": "PCA", "of": "mean-pooled states (frozen)"}
    assert "100% of the points lie nearer their own label's centre" in notice_of(P.map_figure(m))
    assert P.nearest_centre_share([0, 1], [0, 1], ["a", "a"]) is None
    loss = notice_of(P.loss_figure([2.0, 1.0, 0.5], [{"step": 3, "epoch": 1, "val_loss": 0.7, "val_accuracy": 0.8}]))
    assert "from 2.00 on the first batch to 0.50 on the last; the validation loss ends at 0.70" in loss


def test_other_tabs_notices_say_what_their_figure_shows():
    from components.anatomy import plots as A
    from components.efficiency import plots as E
    from components.interventions import plots as I
    from components.pipelines import plots as PL
    from components.search import plots as S

    rows = [{"name": "m fp32", "precision": "fp32", "memory_mb": 500.0, "disk_mb": 500, "tokens_per_s": 20.0,
             "perplexity": 12.0},
            {"name": "m int8", "precision": "int8", "memory_mb": 250.0, "disk_mb": 250, "tokens_per_s": 25.0,
             "perplexity": 12.5}]
    e = notice_of(E.decoder_scatter({"rows": rows}))
    assert "int8 is 2.0x smaller in memory" in e and "1.25x as fast (40.0 vs 50.0 ms per token)" in e
    assert "perplexity: fp32 12.00, int8 12.50" in e
    assert "wins with 0.80, 0.60 ahead of 'POSITIVE'" in notice_of(
        PL.label_bars([{"labels": ["NEGATIVE", "POSITIVE"], "scores": [0.8, 0.2], "sequence": "x"}], "t"))
    assert "first choice is 'Paris' (70%); the top 2 together hold 90%" in notice_of(
        PL.mask_bars({"candidates": [{"token_str": " Paris", "score": 0.7}, {"token_str": "Rome", "score": 0.2}]}))
    assert "below" in notice_of(PL.rouge_bars({"rouge": {"rouge1": {"f1": 0.3}},
                                               "baseline": {"rouge": {"rouge1": {"f1": 0.4}}}}))
    m = {"x": [0, 1], "y": [0, 1], "titles": ["a", "b"], "neighbours": [], "method": "PCA",
         "explained_variance": [0.2, 0.1], "query": {"x": 0, "y": 0}}
    assert "keeps only 30% of the variance" in notice_of(S.map_figure(m))
    diffs = notice_of(A.layer_diffs([{"name": "emb", "max_abs_diff": 0.0}, {"name": "1", "max_abs_diff": 2e-6}],
                                    1e-4, "t"))
    assert "2 of 2 hidden states" in diffs and "largest gap 2.0e-06" in diffs
    budget = notice_of(A.parameter_budget({"rows": [{"component": "MLP", "parameters": 60, "percent": 60.0},
                                                    {"component": "attention", "parameters": 40, "percent": 40.0}]}, "t"))
    assert budget == "MLP holds the most parameters: 60 of the 100 shown (60.0%)."
    top = [{"token": " Paris", "p_before": 0.6, "p_after": 0.1}, {"token": " Rome", "p_before": 0.1, "p_after": 0.5}]
    assert "top next token: ' Paris' (60% before) gives way to ' Rome' (50% after)" in notice_of(I.next_token(top, "t"))
    same = [{"token": "Paris", "p_before": 0.6, "p_after": 0.5}]
    assert "stays 'Paris'; its probability goes from 60% to 50%" in notice_of(I.next_token(same, "t"))


def test_a_semicolon_csv_is_read_as_columns_and_says_so(tmp_path):
    from backend.engines.classify.datasets import read_upload, sniff_delimiter

    rows = [f"text number {i}, with a comma;{'pos' if i % 2 else 'neg'}" for i in range(30)]
    path = tmp_path / "semi.csv"
    path.write_text("text;label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    ds = read_upload(str(path))
    assert sorted(ds.labels) == ["neg", "pos"]
    assert any("semicolons" in n for n in ds.notices), ds.notices
    assert sniff_delimiter("text,label\nhello; there,pos\nbye,neg\n", ",") == ","  # semicolons in a text
    assert sniff_delimiter("text\tlabel\na, b\tpos\n", "\t") == "\t"
    assert sniff_delimiter("text;label\na;b\n", "\t") == ";"


def test_the_train_tab_registers_its_settings_for_links_but_never_an_upload():
    from components.shell import links
    from components.train import ui as train

    links.reset()
    with gr.Blocks():
        train.build()
    link = links.registered()["train"]
    by = {p.name: p for p in link.params}
    assert {"task", "dataset", "methods", "epochs", "learning_rate", "seed"} <= set(by)
    assert "upload" not in by["dataset"].choices and "file" not in by
    assert link.run_id is None  # a link never starts a training
    assert by["methods"].parse("probe,zero_shot,evil") == ["zero_shot", "probe"]
    assert by["methods"].render(["probe", "finetune"]) == "probe,finetune"
    query, _ = links.encode("train", link.params, [p.component.value for p in link.params])
    assert "dataset=emotion" in query and "methods=zero_shot%2Cprobe%2Cfinetune" in query
    values = [{"dataset": "upload"}.get(p.name, p.component.value) for p in link.params]
    assert "dataset=" not in links.encode("train", link.params, values)[0]


def test_the_comparison_picker_builds_the_strategies_json():
    from components.decoding import handlers as decoding

    picked = json.loads(decoding.picked_strategies(["sample, top-p 0.9 (seed 42)", "greedy"]))
    assert [s["strategy"] for s in picked] == ["greedy", "sample"]  # the picker's order
    assert isinstance(decoding.picked_strategies(["greedy"]), type(gr.skip()))  # one is not a comparison
    default = [decoding.COMPARE_CHOICES[n] for n in decoding.COMPARE_PICKED]
    assert default == decoding.decoding.COMPARE_DEFAULT


def test_the_tokenizer_notice_counts_and_names_the_most_split_word():
    from components.tokenizers.ui import notice as tok_notice

    tok = lambda text, cont, special=False: {"text": text, "continuation": cont, "special": special}  # noqa: E731
    data = {"results": {"encoder": {"count": 5, "tokens": [tok("", False, True), tok("un", False), tok("believ", True),
                                                           tok("ably", True), tok("", False, True)]},
                        "decoder": {"count": 2, "tokens": []}}}
    assert "5 tokens for the encoder and 2 for the decoder; the encoder cuts 'unbelievably' into 3 pieces" \
        in tok_notice(data)
    assert tok_notice(None) == ""


@pytest.mark.parametrize("width", [420])
def test_the_figure_script_is_valid_and_placed_once(width):
    from components.shell.figures import FIGURE_JS, PHONE_PX, figure_tools

    assert width <= PHONE_PX and "Plotly.downloadImage" in FIGURE_JS and "__tlabFigures" in FIGURE_JS
    with gr.Blocks():
        html = figure_tools()
    assert "__PREFIX__" not in html.js_on_load and "__PHONE__" not in html.js_on_load


def test_search_and_ner_notices():
    from components.search import plots as S
    from components.train import ner_plots as N

    rows = [dict(label="Flat", index_type="Flat (exact)", query_ms_median=1.2, recall_at_k=1.0, recall_k=10,
                 memory_mb=1.0, build_s=0.1),
            dict(label="HNSW M=32", index_type="HNSW", query_ms_median=0.3, recall_at_k=0.95, recall_k=10,
                 memory_mb=2.0, build_s=0.5)]
    assert "HNSW M=32, answers in 0.300 ms with recall@10 0.95; the exact index takes 1.200 ms" \
        in notice_of(S.tradeoff_figure(rows))
    score = lambda f1: {"precision": f1, "recall": f1, "f1": f1, "support": 2, "predicted": 2}  # noqa: E731
    r = {"steps": 3, "train_sentences": 9, "model": {"checkpoint": "x"}, "predictions": {"test": [1, 2]},
         "test": {"per_type": {"PER": score(0.85), "LOC": score(0.5)}, "overall": score(0.75)},
         "confusion": {"labels": ["O", "B-PER"], "counts": [[10, 2], [1, 5]], "normalised": [[0.8, 0.2], [0.2, 0.8]],
                       "split": "test", "words": 18}}
    assert "PER is found best (F1 0.85) and LOC worst (F1 0.50); overall F1 0.75" in notice_of(N.scores_figure(r))
    assert "2 word(s) tagged 'O' predicted as 'B-PER'" in notice_of(N.confusion_figure(r))
