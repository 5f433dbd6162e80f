"""The Train tab in headless Chromium tells the truth: the estimate shown before a run covers the
whole run (and says whether it is measured or a rough guess), the result line after it compares
the estimate with what it took, and accuracies on a tiny test split carry their count and a 95%
interval."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.train_page import set_budget, open_tab

TAB = "train"  # its page holds this tab alone (tab_url, tests/conftest.py)

POS = ["good great lovely day", "great happy nice fun", "lovely nice good time", "happy good fun great",
       "nice lovely happy fun", "fun great good nice", "good good lovely happy", "great nice fun lovely"]
NEG = ["bad awful terrible night", "awful sad poor mess", "terrible bad poor sad", "sad awful bad mess",
       "poor terrible awful bad", "mess sad poor terrible", "bad bad awful poor", "awful mess terrible sad"]


def test_estimate_before_and_the_comparison_after_a_tiny_upload(page, tab_url, tmp_path):
    f = tmp_path / "tiny.csv"
    f.write_text("text,label\n" + "\n".join([f"{t},pos" for t in POS] + [f"{t},neg" for t in NEG]) + "\n")
    open_tab(page, tab_url)
    page.locator("#train-file input[type=file]").set_input_files(str(f))
    estimate = page.locator("#train-estimate")
    expect(estimate).to_contain_text("12 train / 2 validation / 2 test", timeout=30_000)
    page.get_by_text("Learning curve (8", exact=False).first.click()  # off: the fastest run
    page.get_by_text("Fine-tuning budget").first.click()
    set_budget(page, "train-epochs", 1, "x 1 epoch:")
    # Before the run: the whole run's seconds, part by part, and where the rates come from.
    expect(estimate).to_contain_text("The whole run: about")
    text = estimate.inner_text()
    assert re.search(r"measured in this process|rough guess", text), text
    assert "fine-tuning (steps + a validation pass per epoch)" in text, text
    # 12 examples in batches of 16: one step, then one validation pass
    assert "Fine-tuning 12 examples x 1 epoch: 1 step at" in text and "1 validation pass of" in text, text
    assert "learning curve" not in text  # switched off: not in the estimate either
    planned_text = re.search(r"The whole run: about ([\d.]+ s)", text).group(1)
    planned = float(planned_text[:-2])
    shot(page, "train_truth_estimate")
    page.locator("#train-go").click()
    status = page.locator("#train-status")
    expect(status).to_contain_text("Done: model time", timeout=240_000)
    done = status.inner_text()
    took = float(re.search(r"Done: model time ([\d.]+) s", done).group(1))
    # (The run re-plans when it starts: equal to the box unless, say, the model got loaded meanwhile.)
    if "Estimate off" in done:  # more than 25 % apart: both numbers, and which part was off most
        said = float(re.search(r"took ([\d.]+) s", done).group(1))  # one decimal there, two in the label
        assert abs(said - took) <= 0.051 and "Largest gap" in done, done
        estimated = float(re.search(r"estimated ([\d.]+) s before it started", done).group(1))
        assert abs(took / estimated - 1) > 0.25, (took, estimated, done)
    else:
        estimated = float(re.search(r"\(estimated ([\d.]+) s before it started\)", done).group(1))
        assert abs(took / estimated - 1) <= 0.3, (took, estimated, done)  # 0.25 + the display's rounding
    assert abs(estimated - planned) <= max(0.2 * planned, 0.15) or "loading the model" in text, (estimated, planned)
    # Two test examples: every accuracy in the table carries its count and interval.
    summary = page.locator("#train-summary")
    expect(summary).to_contain_text("(n=2, 95% CI")
    assert summary.inner_text().count("(n=2, 95% CI") == 3, summary.inner_text()
    expect(page.locator("#train-confusion")).to_contain_text("n=2")
    shot(page, "train_truth_result")
    # The next estimate is built from the rates this run measured.
    set_budget(page, "train-epochs", 2, "x 2 epochs:")
    expect(estimate).to_contain_text("measured in this process")
