"""Train tab benchmark: the fine-tuning loop vs a plain PyTorch loop, the logistic-regression
fit vs scikit-learn's, and the learning curves of the shipped sets.

  .venv/bin/python bench/train.py            # ~5-10 min on a 2-core CPU
  .venv/bin/python bench/train.py --quick    # fewer steps and repeats

1. Fine-tuning overhead (target <= 1.1x): `finetune.run` (chunked GPU tasks: the state is
   loaded into a scratch model and copied out every chunk, progress and Stop between chunks)
   vs a plain loop over the *same batches* with the same model, tokenizer settings, AdamW and
   learning-rate schedule, on the real all-MiniLM-L6-v2. Validation is switched off in both
   (it is the same forward either way) so the ratio measures the loop, not the evaluation.
   Reported: seconds per epoch, training examples per second.
2. Logistic regression on the frozen features of the emotion train split (440 x 384): our
   L-BFGS fit in torch vs `sklearn.linear_model.LogisticRegression(C=1, lbfgs)` (a dev
   dependency here, imported only by this script), fit time and test accuracy.
3. Learning curves: test accuracy of zero-shot and feature extraction with 8/16/32/64/128
   examples per label and all, on both shipped sets (fine-tuning per point costs one run each;
   measure it in the tab with "fine-tuning on the curve" where there is a GPU).

4. The offline `sentiment` role: method (b), a probe on frozen features,
   against (c), the fine-tuning recipe the role serves (`hub.builders.train`), on the
   shipped sentiment set's test split; the better one within a minute of CPU serves the role.
   `--offline` runs only this part and replaces its section in the results file.

Writes bench/results/train.md. Ratios, not absolute times, are the point: the machine is shared.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from backend import hub
from backend.train import api as A  # noqa: E402
from backend.engines.classify import datasets as D
from backend.train import features as F  # noqa: E402
from backend.train import gpu  # noqa: E402
from backend.engines.classify import finetune as FT
from backend.engines.classify import metrics as M
from backend.train import probe as P  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "train.md"


def ours(train, budget, n_labels):
    gen = FT.run(train, [], n_labels, budget, gpu.HubWorker(), evaluate=lambda w: {"accuracy": 0.0, "loss": 0.0})
    t0 = time.perf_counter()
    try:
        while True:
            next(gen)
    except StopIteration as done:
        out = done.value
    return time.perf_counter() - t0, out.losses


def plain(train, budget, n_labels):
    """The textbook loop: model + head, AdamW, linear decay, the same batches and seeds."""
    lm = hub.load(gpu.ROLE)
    t0 = time.perf_counter()
    model = FT.EncoderClassifier(copy.deepcopy(lm.model).float(), n_labels)
    torch.manual_seed(budget.seed)
    FT._reset(model, lm, budget.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=budget.learning_rate, weight_decay=0.01)
    batches = FT.schedule(len(train), budget)
    model.train()
    losses = []
    for step, b in enumerate(batches):
        torch.manual_seed(budget.seed * 100_003 + step)
        for g in opt.param_groups:
            g["lr"] = FT.lr_at(step, len(batches), budget.learning_rate)
        enc = FT._encode(lm.tokenizer, [train[i][0] for i in b], lm.device)
        logits, _ = model(**enc)
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([train[i][1] for i in b]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return time.perf_counter() - t0, losses


OFFLINE_TITLE = "## Offline sentiment: (b) feature extraction vs (c) fine-tuning, within a minute of CPU"


def offline_choice(lm) -> list[str]:
    from backend.engines.embedding.vectors import embed_texts
    from backend.hub import builders as offline

    ds = D.load_shipped(offline.DATASET)
    t0 = time.perf_counter()
    feats = {s: embed_texts([t for t, _ in ds.split(s)], lm.model, lm.tokenizer) for s in D.SPLITS}
    features_s = time.perf_counter() - t0
    probe = P.fit(feats["train"], np.array([y for _, y in ds.train]), len(ds.labels), seed=0)
    probe_s = time.perf_counter() - t0
    b = M.report(np.array([y for _, y in ds.test]), probe.predict_proba(feats["test"]), ds.labels)
    _, c = offline.train(hub.load(gpu.ROLE))  # the served recipe, as `pull --profile local` and the first Classify run it
    rb = offline.RECIPE_BUDGET
    return [OFFLINE_TITLE, "",
            f"Shipped sentiment set ({len(ds.train)} train / {len(ds.test)} test, {len(ds.labels)} labels). "
            "(b) the frozen encoder's mean-pooled states into a logistic regression; (c) the recipe the "
            f"offline role serves (`hub.builders`): the whole encoder fine-tuned for {rb.epochs} epochs "
            f"of batches of {rb.batch_size}, AdamW lr {rb.learning_rate:g} with linear decay, best epoch by "
            "validation accuracy, a fixed number of steps (never cut by seconds). Seconds include "
            "evaluation.", "",
            "| method | seconds | test accuracy | macro-F1 | note |", "|---|---:|---:|---:|---|",
            f"| (b) probe: mean-pooled states + logistic regression | {probe_s:.1f} | {b['accuracy']:.4f} | "
            f"{b['macro_f1']:.4f} | features {features_s:.1f} s |",
            f"| (c) fine-tuning, {rb.epochs} epochs | {c['train_s']:.1f} | {c['test_accuracy']:.4f} | "
            f"{c['test_macro_f1']:.4f} | {c['steps']} steps, best epoch {c['best_epoch']:g} |",
            "", f"Chosen (the better within a minute of CPU): **{'(b)' if b['accuracy'] >= c['test_accuracy'] or c['train_s'] > 60 else '(c)'}**; "
            f"the offline role serves (c).", ""]


def logistic_rows(lm, emo) -> list[str]:
    """Logistic regression on frozen features: our torch L-BFGS fit against scikit-learn's, emotion set."""
    X = {s: F.extract([t for t, _ in emo.split(s)], lm.checkpoint) for s in D.SPLITS}
    Y = {s: np.array([y for _, y in emo.split(s)]) for s in D.SPLITS}
    fits = []
    for _ in range(5):
        t0 = time.perf_counter()
        pr = P.fit(X["train"], Y["train"], len(emo.labels))
        fits.append(time.perf_counter() - t0)
    acc = M.accuracy(Y["test"], pr.predict_proba(X["test"]).argmax(1))
    rows = [f"| ours: torch L-BFGS, standardised, C=1 | {statistics.median(fits):.3f} | {pr.iterations} | {acc:.4f} |"]
    try:
        t0 = time.perf_counter()
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler
        import_s = time.perf_counter() - t0
        sk = []
        for _ in range(5):
            t0 = time.perf_counter()
            sc = StandardScaler().fit(X["train"])
            clf = LogisticRegression(C=1.0, max_iter=1000).fit(sc.transform(X["train"]), Y["train"])
            sk.append(time.perf_counter() - t0)
        sk_acc = M.accuracy(Y["test"], clf.predict(sc.transform(X["test"])))
        rows.append(f"| scikit-learn LogisticRegression(lbfgs) + StandardScaler (import {import_s:.1f} s) | "
                    f"{statistics.median(sk):.3f} | {int(clf.n_iter_[0])} | {sk_acc:.4f} |")
        ratio = f" Ours / scikit-learn fit time: {statistics.median(fits) / statistics.median(sk):.2f}x."
    except ImportError:
        ratio = " (scikit-learn not installed: no comparison.)"
    lines = ["## Logistic regression on frozen features", "",
              f"Emotion train split, {X['train'].shape[0]} x {X['train'].shape[1]} features; median of 5 fits.{ratio}", "",
              "| fit | seconds | iterations | test accuracy |", "|---|---:|---:|---:|", *rows, ""]
    print("\n".join(lines[-7:]), flush=True)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--offline", action="store_true", help="only the offline sentiment comparison")
    args = ap.parse_args()
    if args.offline:
        old = OUT.read_text() if OUT.exists() else "# Train benchmark\n"
        old = old.split("## Offline sentiment:")[0].rstrip() + "\n\n"
        section = offline_choice(hub.load(gpu.ROLE))
        print("\n".join(section), flush=True)
        OUT.write_text(old + "\n".join(section) + "\n")
        return 0
    load0 = os.getloadavg()[0]
    n_examples, repeats = (64, 1) if args.quick else (160, 2)
    lines = ["# Train benchmark", "",
             f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, transformers "
             f"{transformers.__version__}, {torch.get_num_threads()} threads; load average at start {load0:.1f} "
             f"(a shared machine: compare the ratios, measured in one run).", ""]
    lm = hub.load(gpu.ROLE)
    emo = D.load_shipped("emotion")

    # ------------------------------------------------------------ 1. fine-tuning loop overhead
    train = D.cap_examples(emo.train, n_examples, 0)
    budget = FT.Budget(epochs=1, max_examples=n_examples, max_seconds=3600, learning_rate=1e-4, batch_size=16)
    plain(train[:16], FT.Budget(epochs=1, batch_size=16), len(emo.labels))  # warm-up
    t_ours, t_plain = [], []
    for _ in range(repeats):  # interleaved
        s, l_ours = ours(train, budget, len(emo.labels))
        t_ours.append(s)
        s, l_plain = plain(train, budget, len(emo.labels))
        t_plain.append(s)
    o, p = min(t_ours), min(t_plain)
    same = np.allclose(l_ours, l_plain, atol=1e-4)
    steps = len(FT.schedule(len(train), budget))
    lines += ["## Fine-tuning: our chunked loop vs a plain PyTorch loop (same batches)", "",
              f"all-MiniLM-L6-v2 + linear head, emotion train subset of {len(train)} examples, batch 16, "
              f"{steps} steps = 1 epoch, AdamW lr 1e-4 linear decay; best of {repeats} interleaved runs. "
              f"Same losses step by step: {'yes' if same else 'NO'} (max diff "
              f"{max(abs(a - b) for a, b in zip(l_ours, l_plain)):.2e}).", "",
              "| loop | s / epoch | examples / s | ours / plain |", "|---|---:|---:|---:|",
              f"| ours (`finetune.run`, chunks of ~{FT.CHUNK_SECONDS:.0f} s as GPU tasks) | {o:.2f} | {len(train) / o:.1f} | {o / p:.2f}x |",
              f"| plain loop | {p:.2f} | {len(train) / p:.1f} | 1.00x |", ""]
    print("\n".join(lines[-8:]), flush=True)

    lines += logistic_rows(lm, emo)

    # ------------------------------------------------------------ 3. learning curves
    lines += ["## Learning curves (test accuracy)", "",
              "Zero-shot = cosine to `This text is about {label}.` (the Pipelines' method, flat: it does not "
              "train); probe = feature extraction + logistic regression on a seeded stratified subset. "
              "The train splits hold at most 75 (emotion) and 110 (sentiment) per label, so 128 is the "
              "'all' point.", ""]
    for name in D.SHIPPED:
        ds = D.load_shipped(name)
        feats = {s: F.extract([t for t, _ in ds.split(s)], lm.checkpoint) for s in D.SPLITS}
        zs = F.zero_shot_probs([t for t, _ in ds.test], ds.labels)
        curve = A._learning_curve(ds, feats, zs, ["zero_shot", "probe"], FT.Budget(), False, None, None)
        lines += [f"**{name}** ({len(ds.labels)} labels)", "",
                  "| per label | " + " | ".join(map(str, curve["sizes"])) + " |",
                  "|---|" + "---:|" * len(curve["sizes"]),
                  "| examples | " + " | ".join(map(str, curve["examples"])) + " |",
                  "| zero-shot | " + " | ".join(f"{v:.3f}" for v in curve["zero_shot"]) + " |",
                  "| features + logistic regression | " + " | ".join(f"{v:.3f}" for v in curve["probe"]) + " |", ""]
        print("\n".join(lines[-7:]), flush=True)
    lines += offline_choice(lm)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
