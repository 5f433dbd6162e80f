"""The Train tab's snippet (`/train`, chapters 2 and 9): the run's data, the embedder that served it, and one
block per method that ran, in plain transformers + torch + numpy, written so that it gives the run's numbers:

- zero-shot: cosines between the test texts and "This text is about {label}." (mean-pooled, L2-normalised
  vectors, batched longest first as the app embeds), softmax(cosine / T) with the app's temperature;
- the probe: the same vectors of the train split, standardised, a multinomial logistic regression by L-BFGS
  in torch with the app's settings (backend/train/probe.py; sklearn's LogisticRegression(C=1.0) has the
  same objective);
- fine-tuning: encoder + dropout + linear head on the mean-pooled states, the head seeded, AdamW (weight
  decay) with a linear decay, the batches shuffled per epoch with the run's seed, the dropout reseeded
  each step, the best epoch by validation kept (backend/engines/classify/finetune.py, the same order of ops).

Everything is read from the result (`budget`, `model`, `dataset`, the methods it holds, fine-tuning's steps
and examples) and, for an upload, from the inputs (its file name and columns). Plain strings; nothing runs.
"""

from __future__ import annotations

from backend.engines.classify import datasets
from backend.engines.classify import probe_recipe as probe  # how the app fits the probe
from dataclasses import asdict

from backend.engines.classify import finetune as FT
from backend.engines.classify.finetune import EVAL_BATCH  # texts per forward when fine-tuning's model scores
from backend.engines.classify.finetune_plan import MAX_LENGTH, Budget
from backend.engines.classify.similarity import DEFAULT_TEMPERATURE as TEMPERATURE  # the zero-shot softmax's
from backend.engines.embedding.vectors import BATCH, CHUNK  # texts per forward, and per embedding call
from backend.engines.embedding.vectors import DEFAULT_MAX_LENGTH as EMBED_MAX_LENGTH  # the embedder's token limit
from backend.snippets.checkpoint import loading
from backend.snippets.text import call, file_name, script

BUDGET = asdict(Budget())  # what /train runs with where a result leaves a setting out
ADDS = ("# What the app adds: the time estimate and budget (which may cut fine-tuning short), Stop, the learning "
        "curve, the hardest validation examples, the PCA maps, the confusion matrices and F1, and the trained "
        "model kept in your session to try, use in Pipelines or download.")


def _shipped(name: str, labels: list[str]) -> tuple[list[str], list[str]]:
    folder = f"assets/data/{name}"
    return ["import json"], [
        f"# The {name} set the app ships ({folder}/*.jsonl in the Transformers Lab repository: run from a checkout)",
        f"labels = {labels!r}",
        "",
        "def read(split):",
        f'    rows = [json.loads(line) for line in open(f"{folder}/{{split}}.jsonl", encoding="utf-8") if line.strip()]',
        '    return [(r["text"], labels.index(r["label"])) for r in rows]',
        "",
        'train, validation, test = read("train"), read("validation"), read("test")']


def _delimiter(notices: list[str], default: str) -> str:
    """The delimiter the app detected in an uploaded CSV / TSV (its notice names it), else the file type's."""
    for sep, name in datasets.DELIMITER_NAMES.items():
        if any(f"separated by {name}" in n for n in notices):
            return sep
    return default


def _column(wanted: str, guesses: tuple[str, ...]) -> str:
    """An expression for the column the app read: the one named in the box, else its first guess present."""
    if (wanted or "").strip():
        return repr(wanted.strip())
    return f"next(lower[g] for g in {guesses!r} if g in lower)"


def _upload(inputs: dict, result: dict) -> tuple[list[str], list[str]]:
    """The learner's file by its name, read and split as backend/engines/classify/datasets.read_upload does."""
    upload = inputs.get("file")
    name = file_name(upload if isinstance(upload, str) and upload else  # else the app's name for it (cut at 60)
                     result.get("dataset", {}).get("name") or "your_file.csv")
    notices = list(result.get("dataset", {}).get("notices") or [])
    jsonl = name.lower().endswith((".jsonl", ".json"))
    if jsonl:
        imports, read = ["import json"], [
            f"records = [json.loads(line) for line in open({name!r}, encoding=\"utf-8-sig\") if line.strip()]",
            "columns = list(dict.fromkeys(k for r in records for k in r))"]
    else:
        sep = _delimiter(notices, "\t" if name.lower().endswith(".tsv") else ",")
        imports, read = ["import csv"], [
            f"with open({name!r}, newline=\"\", encoding=\"utf-8-sig\") as f:",
            f"    reader = csv.DictReader(f, delimiter={sep!r})",
            "    records, columns = list(reader), reader.fieldnames"]
    by_file = any("'split' column" in n and "taken" in n for n in notices)
    lines = [f"# Your file, read as the app reads it (an upload: {name})", *read,
             "lower = {c.lower().strip(): c for c in columns}",
             f"text_col = {_column(inputs.get('text_column') or '', datasets.TEXT_GUESSES)}",
             f"label_col = {_column(inputs.get('label_column') or '', datasets.LABEL_GUESSES)}",
             "",
             "def cell(r, c):",
             '    return "" if r.get(c) is None else str(r[c]).strip()',
             "",
             f"rows = [(cell(r, text_col)[:{datasets.MAX_TEXT_CHARS}], cell(r, label_col)) for r in records]",
             "keep = [i for i, (t, l) in enumerate(rows) if t and l]  # rows with an empty text or label are skipped",
             "labels = sorted({rows[i][1] for i in keep})"]
    if by_file:
        lines += ["split_col = next(c for c in columns if c.lower().strip() == \"split\")",
                  "splits = {s: [rows[i] for i in keep if cell(records[i], split_col).lower() == s]",
                  "          for s in (\"train\", \"validation\", \"test\")}  # the file's own 'split' column"]
    else:
        lines += ["splits = {\"train\": [], \"validation\": [], \"test\": []}  # 70/15/15 per label, seeded",
                  "for label in labels:",
                  "    items = [rows[i] for i in keep if rows[i][1] == label]",
                  "    random.Random(f\"0-{label}\").shuffle(items)",
                  f"    n = max(1, round(len(items) * {datasets.EVAL_SHARE}))",
                  "    splits[\"validation\"] += items[:n]",
                  "    splits[\"test\"] += items[n:2 * n]",
                  "    splits[\"train\"] += items[2 * n:]",
                  "for s, items in splits.items():",
                  "    random.Random(f\"0-{s}\").shuffle(items)"]
        imports = [*imports, "import random"]
    lines += ["train, validation, test = ([(t, labels.index(l)) for t, l in splits[s]]",
              "                           for s in (\"train\", \"validation\", \"test\"))"]
    return imports, lines


def dataset_lines(inputs: dict, result: dict) -> tuple[list[str], list[str]]:
    """(imports, lines) that define `labels` and the three splits `train`, `validation`, `test` of
    (text, label index) rows, as the run read them."""
    ds = result.get("dataset") or {}
    if ds.get("source") == "upload":
        return _upload(inputs or {}, result)
    return _shipped(str(ds.get("name") or "emotion"), list(ds.get("labels") or []))


def _embedding(result: dict) -> tuple[list[str], list[str]]:
    load = loading(result.get("model") or {}, "AutoModel", what="encoder")
    return ["import numpy as np", "import torch", "from torch import nn", *load.imports], load.lines + [
        "",
        "def mean_pool(hidden, mask):  # the mean of the real tokens' states (padding left out)",
        "    mask = mask.unsqueeze(-1).to(hidden.dtype)",
        "    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)",
        "",
        "",
        "def embed(texts):  # the frozen encoder's vectors: mean-pooled, unit length",
        "    out = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)",
        f"    for c in range(0, len(texts), {CHUNK}):  # as the app batches: {CHUNK} texts a call, "
        f"{BATCH} a batch, longest first",
        "        order = sorted(range(c, min(c + " + str(CHUNK) + ", len(texts))), key=lambda i: -len(texts[i]))",
        "        with torch.inference_mode():",
        f"            for s in range(0, len(order), {BATCH}):",
        f"                idx = order[s:s + {BATCH}]",
        "                enc = tokenizer([texts[i] for i in idx], padding=True, truncation=True, "
        f"max_length={EMBED_MAX_LENGTH}, return_tensors=\"pt\")",
        "                pooled = mean_pool(encoder(**enc).last_hidden_state.float(), enc[\"attention_mask\"])",
        "                out[idx] = nn.functional.normalize(pooled, p=2, dim=1).numpy()",
        "    return out",
        "",
        "",
        "def softmax(z):",
        "    z = np.asarray(z, dtype=np.float64)",
        "    e = np.exp(z - z.max(axis=1, keepdims=True))",
        "    return e / e.sum(axis=1, keepdims=True)",
        "",
        "",
        "test_texts, y_test = [t for t, _ in test], np.array([y for _, y in test])",
        "probs = {}  # each method's class probabilities on the test split"]


def _zero_shot(template: str) -> list[str]:
    return [f"# Zero-shot: no training; the cosine between a text and each label's description, softmax(cos / {TEMPERATURE})",
            f"descriptions = [{template!r}.format(label) for label in labels]",
            "vectors = embed(test_texts + descriptions)",
            "cosine = vectors[:len(test_texts)] @ vectors[len(test_texts):].T",
            f"probs[\"zero_shot\"] = softmax(cosine.astype(np.float64) / {TEMPERATURE})"]


def _probe() -> list[str]:
    return ["# Feature extraction + logistic regression on the frozen vectors of the whole train split;",
            f"# sklearn's LogisticRegression(C={probe.C}) fits the same objective (softmax + L2 on standardised features)",
            "x_train, x_test = embed([t for t, _ in train]), embed(test_texts)",
            "mean, scale = x_train.mean(axis=0), x_train.std(axis=0)",
            f"scale = np.where(scale > {probe.MIN_SCALE}, scale, 1.0).astype(np.float32)",
            "z, y = torch.as_tensor((x_train - mean) / scale), torch.tensor([y for _, y in train])",
            "w = torch.zeros(z.shape[1], len(labels), requires_grad=True)",
            "b = torch.zeros(len(labels), requires_grad=True)",
            "lbfgs = " + call("torch.optim.LBFGS", ["[w, b]"], probe.LBFGS),
            "",
            "",
            f"def objective():  # mean cross-entropy + ||w||^2 / (2 C n), C = {probe.C}: sklearn's sum, divided by n",
            "    lbfgs.zero_grad()",
            f"    loss = nn.functional.cross_entropy(z @ w + b, y) + 0.5 * (1.0 / ({probe.C} * len(y))) * (w * w).sum()",
            "    loss.backward()",
            "    return loss",
            "",
            "",
            "lbfgs.step(objective)",
            "probs[\"probe\"] = softmax(((x_test - mean) / scale) @ w.detach().numpy() + b.detach().numpy())"]


def _cap(ft: dict, budget: dict, n_train: int | None) -> list[str]:
    """`ft_train`: the rows fine-tuning used (datasets.cap_examples: at most max_examples, even per label)."""
    budget = {**BUDGET, **budget}
    examples, cap, seed = ft.get("examples"), int(budget["max_examples"]), int(budget["seed"])
    if examples is None or n_train is None or examples >= n_train:
        return ["ft_train = train"]
    return [f"# At most {cap} examples (max_examples), the same number of each label, drawn with the seed",
            f"rng, per_label = random.Random({seed}), max(1, {cap} // len(labels))",
            "keep = []",
            "for label in range(len(labels)):",
            "    idx = [i for i, (_, y) in enumerate(train) if y == label]",
            "    keep += idx if len(idx) <= per_label else rng.sample(idx, per_label)",
            f"ft_train = [train[i] for i in sorted(keep)][:{cap}]"]


def _finetune(result: dict) -> tuple[list[str], list[str]]:
    ft = (result.get("methods") or {}).get("finetune") or {}
    budget = {**BUDGET, **(result.get("budget") or {})}  # the run's, else the app's defaults
    epochs, batch, seed = int(budget["epochs"]), int(budget["batch_size"]), int(budget["seed"])
    lr = float(budget["learning_rate"])
    n_train = ((result.get("dataset") or {}).get("sizes") or {}).get("train")
    steps, total = ft.get("steps"), ft.get("total_steps")
    cut = steps is not None and total is not None and steps < total
    run = f"batches[:{int(steps)}]" if cut else "batches"
    lines = ["# Fine-tuning: the whole encoder + dropout + a linear head on the mean-pooled states",
             *_cap(ft, budget, n_train),
             f"lr, epochs, batch_size, seed = {lr!r}, {epochs}, {batch}, {seed}",
             "",
             "",
             "class Classifier(nn.Module):",
             "    def __init__(self, encoder, n_labels):",
             "        super().__init__()",
             f"        self.encoder, self.dropout = encoder, nn.Dropout({FT.DROPOUT})",
             "        self.head = nn.Linear(encoder.config.hidden_size, n_labels)",
             "",
             "    def forward(self, enc):",
             "        pooled = mean_pool(self.encoder(**enc).last_hidden_state, enc[\"attention_mask\"])",
             "        return self.head(self.dropout(pooled))",
             "",
             "",
             "def encode(texts):",
             f"    return tokenizer(texts, padding=True, truncation=True, max_length={MAX_LENGTH}, return_tensors=\"pt\")",
             "",
             "",
             "def predict(model, texts):  # class probabilities, longest texts first, in eval mode",
             "    model.eval()",
             "    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))",
             "    out = np.zeros((len(texts), len(labels)))",
             "    with torch.inference_mode():",
             f"        for s in range(0, len(texts), {EVAL_BATCH}):",
             f"            idx = order[s:s + {EVAL_BATCH}]",
             "            out[idx] = torch.softmax(model(encode([texts[i] for i in idx])).float(), dim=-1).numpy()",
             "    return out",
             "",
             "",
             "model = Classifier(copy.deepcopy(encoder).float(), len(labels))  # a copy: `encoder` stays frozen above",
             "with torch.no_grad():  # the head seeded, its bias zero",
             "    bound = 1.0 / math.sqrt(model.head.in_features)",
             "    model.head.weight.uniform_(-bound, bound, generator=torch.Generator().manual_seed(seed))",
             "    model.head.bias.zero_()",
             "batches = []  # every epoch's batches, the examples shuffled per epoch with the seed",
             "for epoch in range(epochs):",
             "    order = list(range(len(ft_train)))",
             "    random.Random(seed * 1000 + epoch).shuffle(order)",
             "    batches += [order[s:s + batch_size] for s in range(0, len(order), batch_size)]",
             "per_epoch = math.ceil(len(ft_train) / batch_size)",
             f"optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay={FT.WEIGHT_DECAY})",
             "val_texts, y_val = [t for t, _ in validation], np.array([y for _, y in validation])",
             "best = None",
             "model.train()"]
    if cut:
        lines.append(f"# The app's time budget ended this run after {int(steps)} of its {int(total)} steps "
                     f"({ft.get('stopped', 'time budget')}): the same steps here, the same schedule")
    lines += [f"for step, batch in enumerate({run}):",
              "    torch.manual_seed(seed * 100_003 + step)  # this step's dropout masks",
              "    for group in optimizer.param_groups:  # linear decay to 0 over the run, no warm-up",
              "        group[\"lr\"] = lr * max(0.0, 1.0 - step / max(1, len(batches)))",
              "    logits = model(encode([ft_train[i][0] for i in batch]))",
              "    loss = nn.functional.cross_entropy(logits, torch.tensor([ft_train[i][1] for i in batch]))",
              "    optimizer.zero_grad(set_to_none=True)",
              "    loss.backward()",
              "    optimizer.step()",
              f"    if (step + 1) % per_epoch == 0 or step + 1 == len({run}):  # an epoch's end: keep the best on validation",
              "        p = predict(model, val_texts)",
              "        p_true = np.clip(p[np.arange(len(y_val)), y_val], 1e-12, 1.0)",
              "        score = (round(float((p.argmax(1) == y_val).mean()), 4), -round(float(-np.log(p_true).mean()), 4))",
              "        if best is None or score > best[0]:",
              "            best = (score, {k: v.detach().clone() for k, v in model.state_dict().items()})",
              "        model.train()",
              "model.load_state_dict(best[1])",
              "probs[\"finetune\"] = predict(model, test_texts)"]
    return ["import copy", "import math", "import random"], lines


def train(inputs: dict, result: dict) -> str:
    methods = [m for m in ("zero_shot", "probe", "finetune") if m in (result.get("methods") or {})]
    data_imports, data = dataset_lines(inputs, result)
    embed_imports, embed = _embedding(result)
    imports, blocks = [*data_imports, *embed_imports], [data, embed]
    if "zero_shot" in methods:
        blocks.append(_zero_shot(str(result["methods"]["zero_shot"].get("template") or "This text is about {}.")))
    if "probe" in methods:
        blocks.append(_probe())
    if "finetune" in methods:
        ft_imports, ft = _finetune(result)
        imports += ft_imports
        blocks.append(ft)
    blocks.append(["for method, p in probs.items():",
                   "    print(method, \"test accuracy\", round(float((p.argmax(1) == y_test).mean()), 4))",
                   ADDS])
    return script(sorted(set(imports), key=_import_order), *blocks)


def _import_order(line: str) -> tuple:
    """Plain imports first, then from-imports; each group alphabetical (as the other snippets read)."""
    return (line.startswith("from "), line)
