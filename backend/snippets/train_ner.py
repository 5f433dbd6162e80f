"""The Train tab's NER snippet (`/train_ner`, chapter 4): the run written out in plain torch. The embedder the
run fine-tuned, a dropout and a linear head per token (and, with word shapes, a small shape embedding at the
encoder's input and beside its states at the head), the shipped NER set read from a checkout (or the upload by
its file name, split 70/15/15 as the app splits it), the first piece of each word labelled (the others -100),
then the app's own loop: the same seeded head, the same batches, AdamW with the same parameter groups, the
linear warm-up and decay, the same dropout seed; then the test split tagged by first pieces and scored per
entity type as seqeval's default mode scores it.

Everything is read from the result (its `recipe`, `dataset`, `train_sentences`, `best_step`, `total_steps`):
the app keeps the weights of the epoch with the best validation F1, so the loop stops at that step (the same
schedule over all the steps), which gives the kept model exactly."""

from __future__ import annotations

from dataclasses import asdict

from backend.engines.classify.datasets import EVAL_SHARE  # an upload's validation and test shares
from backend.engines.ner.data import JSONL_EXTS  # an upload's other extensions are CoNLL columns
from backend.engines.ner.token_classification import EVAL_BATCH, Recipe  # how the app tags and trains
from backend.snippets.checkpoint import loading
from backend.snippets.text import file_name, literal, script
from backend.snippets.word_shapes import WORD_SHAPE

NER_FILES = "assets/data/ner/{split}.jsonl"  # the shipped splits, in the app's repository
THIRD_PARTY = ("torch", "transformers")  # the snippet's imports after the standard library's
FIXED = asdict(Recipe())  # the recipe's fields where a result lacks one: the app's own defaults


def _recipe(result: dict) -> dict:
    return {**FIXED, **(result.get("recipe") or {})}


def _upload_lines(name: str, seed: int) -> list[str]:
    """Lines that define `train` and `test` from the learner's file, read and split as the app does."""
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in JSONL_EXTS:
        read = [
            f"rows = [json.loads(line) for line in open({name!r}, encoding='utf-8-sig') if line.strip()]"
            "  # the file you uploaded",
            'if "text" in rows[0] and "tokens" not in rows[0]:  # character spans -> words with BIO tags',
            "    WORD = re.compile(r\"\\w+(?:[-'.]\\w+)*|[^\\w\\s]\")",
            "    sentences = []",
            "    for row in rows:",
            '        found = [(m.group(), m.start(), m.end()) for m in WORD.finditer(row["text"])]',
            '        tags = ["O"] * len(found)',
            '        for e in row.get("entities", row.get("spans", [])):',
            '            inside = [i for i, (_, a, b) in enumerate(found) if a >= e["start"] and b <= e["end"]]',
            "            for k, i in enumerate(inside):",
            '                tags[i] = ("B-" if k == 0 else "I-") + e.get("label", e.get("type")).upper()',
            '        sentences.append({"tokens": [w for w, _, _ in found], "tags": tags})',
            "else:",
            "    sentences = rows"]
    else:
        read = [
            "sentences, words, tags = [], [], []  # CoNLL columns: the word first, its tag last",
            f"for line in open({name!r}, encoding='utf-8-sig').read().splitlines() + ['']:  # the file you uploaded",
            "    cols = line.split()",
            '    if not cols or cols[0] == "-DOCSTART-":  # a blank line (or a document break) ends a sentence',
            "        if words:",
            '            sentences.append({"tokens": words, "tags": tags})',
            "        words, tags = [], []",
            "    else:",
            "        words.append(cols[0])",
            "        tags.append(cols[-1])"]
    return read + [
        "order = list(range(len(sentences)))  # the app's split: 70/15/15, shuffled with the seed",
        f'random.Random("ner-{seed}").shuffle(order)',
        f"n_eval = max(1, round(len(order) * {EVAL_SHARE}))",
        "test = [sentences[i] for i in order[n_eval:2 * n_eval]]",
        "train = [sentences[i] for i in order[2 * n_eval:]]"]


def _data(inputs: dict, result: dict, r: dict) -> tuple[list[str], list[str]]:
    """(imports, lines) that define `train` (the sentences the run trained on), `test` and `labels`."""
    dataset = result.get("dataset") or {}
    seed = int(r["seed"])
    if dataset.get("source") == "upload":
        imports = ["import json", "import random", "import re"]
        lines = _upload_lines(file_name(inputs.get("file") or dataset.get("name") or "upload.conll"), seed)
    else:
        imports = ["import json", "import random"]
        lines = [f"# the shipped NER set ({NER_FILES.format(split='*')} in the app's repository: run from a checkout)",
                 "def read(split):",
                 f"    return [json.loads(line) for line in open(f{NER_FILES.format(split='{split}')!r}, "
                 "encoding=\"utf-8\") if line.strip()]",
                 'train, test = read("train"), read("test")']
    n, of = result.get("train_sentences"), (dataset.get("sizes") or {}).get("train")
    if isinstance(n, int) and isinstance(of, int) and 0 < n < of:
        lines.append(f'train = random.Random("ner-slice-{seed}").sample(train, {n})  # max_sentences={n}')
    labels = dataset.get("labels") or ["O"]
    lines += [f"labels = {literal(list(labels))}", "label2id = {label: i for i, label in enumerate(labels)}"]
    return imports, lines


def _model(r: dict) -> list[str]:
    """The token classifier's class, as the app's (the same modules in the same order: the same seeded head)."""
    dim, into = int(r["shape_dim"] or 0), bool(r["shape_input"])
    shapes = bool(dim or into)
    init = ["class TokenClassifier(nn.Module):",
            "    def __init__(self, encoder, n_labels):",
            "        super().__init__()",
            "        self.encoder = encoder",
            f"        self.dropout = nn.Dropout({float(r['dropout'])})"]
    if dim:
        init.append(f"        self.shapes = nn.Embedding(7, {dim})  # a word-shape vector beside each token's state")
    if into:
        init += ["        self.shape_in = nn.Embedding(7, encoder.config.hidden_size)  # and added to its input",
                 "        nn.init.zeros_(self.shape_in.weight)  # starts as the pretrained encoder exactly"]
    init.append(f"        self.head = nn.Linear(encoder.config.hidden_size{f' + {dim}' if dim else ''}, n_labels)")
    args = "enc, shape_ids" if shapes else "enc"
    if into:
        body = ['        embeds = self.encoder.get_input_embeddings()(enc["input_ids"]) + self.shape_in(shape_ids)',
                "        rest = {k: v for k, v in enc.items() if k != \"input_ids\"}",
                "        hidden = self.encoder(inputs_embeds=embeds, **rest).last_hidden_state"]
    else:
        body = ["        hidden = self.encoder(**enc).last_hidden_state"]
    if dim:
        body.append("        hidden = torch.cat([hidden, self.shapes(shape_ids)], dim=-1)")
    body.append("        return self.head(self.dropout(hidden))")
    return (WORD_SHAPE + [""] if shapes else []) + init + ["", f"    def forward(self, {args}):"] + body


def _batches(r: dict, shapes: bool, device: str) -> list[str]:
    """`encode(sentences)`: the pieces, each row's word ids, the first-piece labels (the others -100) and the
    word shapes (on the run's device)."""
    on = f", device={device!r}" if device != "cpu" else ""
    moved = [f"    enc = {{k: v.to({device!r}) for k, v in enc.items()}}  # on the run's device"] if on else []
    tensors = "enc" if on else "dict(enc)"
    out = ["def encode(sentences):",
           '    enc = tokenizer([s["tokens"] for s in sentences], is_split_into_words=True, truncation=True,',
           f'                    max_length={int(r["max_length"])}, padding=True, return_tensors="pt")',
           '    width, word_ids = enc["input_ids"].shape[1], [enc.word_ids(row) for row in range(len(sentences))]',
           "    label_rows, shape_rows = [], []",
           "    for ids, s in zip(word_ids, sentences):",
           "        row, previous = [], None",
           "        for w in ids:  # a word's first piece carries its tag; its other pieces and [CLS]/[SEP]: -100",
           '            row.append(-100 if w is None or w == previous else label2id[s["tags"][w]])',
           "            previous = w",
           "        label_rows.append(row + [-100] * (width - len(row)))"]
    if shapes:
        out += ['        row = [0 if w is None else word_shape(s["tokens"][w]) for w in ids]',
                "        shape_rows.append(row + [0] * (width - len(row)))", *moved,
                f"    return {tensors}, word_ids, torch.tensor(label_rows{on}), torch.tensor(shape_rows{on})"]
    else:
        out += [*moved, f"    return {tensors}, word_ids, torch.tensor(label_rows{on}), None"]
    return out


def _training(r: dict, result: dict, shapes: bool, device: str) -> list[str]:
    seed, epochs, batch = int(r["seed"]), int(r["epochs"]), int(r["batch_size"])
    lr, head_scale = float(r["learning_rate"]), float(r["head_lr_scale"])
    total, best = result.get("total_steps"), result.get("best_step")
    head_lr = "LEARNING_RATE" if head_scale == 1.0 else f"LEARNING_RATE * {head_scale!r}"
    lines = [f"EPOCHS, BATCH_SIZE, LEARNING_RATE, SEED = {epochs}, {batch}, {lr!r}, {seed}",
             "torch.manual_seed(SEED)  # the head's (and the shape embeddings') initial weights",
             "model = TokenClassifier(encoder.float(), len(labels))" + (
                 f".to({device!r})  # the device the run trained on" if device != "cpu" else ""),
             "",
             "rng = random.Random(SEED)  # each epoch's shuffled order, cut into batches",
             "batches = []",
             "for _ in range(EPOCHS):",
             "    order = list(range(len(train)))",
             "    rng.shuffle(order)",
             "    batches += [order[i:i + BATCH_SIZE] for i in range(0, len(train), BATCH_SIZE)]",
             "total = len(batches)",
             f"warmup = int(round({float(r['warmup'])!r} * total))",
             "",
             "",
             "def lr_factor(step):  # a linear warm-up, then a linear decay to 0 at the last step",
             "    return (step + 1) / warmup if step < warmup else max(0.0, (total - step) / max(1, total - warmup))",
             "",
             "",
             "groups = {}  # AdamW without decay on biases and norms (the Trainer's grouping)",
             "for name, p in model.named_parameters():"]
    if r["freeze_word_embeddings"]:
        lines += ['    if "word_embeddings" in name:  # the vocabulary table stays as it is',
                  "        p.requires_grad_(False)",
                  "        continue"]
    lines += [f'    lr = LEARNING_RATE if name.startswith("encoder.") else {head_lr}',
              f'    decay = 0.0 if p.ndim < 2 or "norm" in name.lower() else {float(r["weight_decay"])!r}',
              "    groups.setdefault((lr, decay), []).append(p)",
              'optimizer = torch.optim.AdamW([{"params": ps, "lr": lr, "weight_decay": wd, "initial_lr": lr}',
              "                               for (lr, wd), ps in groups.items()], lr=LEARNING_RATE)",
              "loss_fn = nn.CrossEntropyLoss(ignore_index=-100)",
              "",
              "torch.manual_seed(SEED)  # dropout's draws, step by step"]
    steps = "batches"
    if result.get("stopped"):
        lines.append("# (Stop ended this run before its test scoring: the app kept no model; this runs every step.)")
    if isinstance(best, int) and isinstance(total, int) and 0 < best < total:
        lines.append(f"steps = {best}  # the app kept the weights after step {best} of {total} (its best epoch on "
                     "validation): the same schedule, stopped there")
        steps = "batches[:steps]"
    call = "model(enc, shape_ids)" if shapes else "model(enc)"
    return lines + [
        "model.train()",
        f"for step, idx in enumerate({steps}):",
        "    enc, _, label_ids, shape_ids = encode([train[i] for i in idx])",
        "    for group in optimizer.param_groups:",
        '        group["lr"] = group["initial_lr"] * lr_factor(step)',
        f"    logits = {call}",
        "    loss = loss_fn(logits.reshape(-1, logits.shape[-1]), label_ids.reshape(-1))",
        "    optimizer.zero_grad(set_to_none=True)",
        "    loss.backward()",
        "    optimizer.step()"]


def _tagging(shapes: bool, device: str) -> list[str]:
    call = "model(enc, shape_ids)" if shapes else "model(enc)"
    return [
        "model.eval()  # the test split tagged, longest sentences first, each word by its first piece",
        "predicted = [None] * len(test)",
        'order = sorted(range(len(test)), key=lambda i: -len(test[i]["tokens"]))',
        "with torch.inference_mode():",
        f"    for start in range(0, len(order), {EVAL_BATCH}):",
        f"        idx = order[start:start + {EVAL_BATCH}]",
        "        enc, word_ids, _, shape_ids = encode([test[i] for i in idx])",
        f"        probs = {call}.softmax(-1){'.cpu()' if device != 'cpu' else ''}.numpy()",
        "        for row, i in enumerate(idx):",
        '            tags, previous = ["O"] * len(test[i]["tokens"]), None  # a word without a piece stays O',
        "            for pos, w in enumerate(word_ids[row]):",
        "                if w is not None and w != previous:",
        "                    tags[w] = labels[int(probs[row, pos].argmax())]",
        "                previous = w",
        "            predicted[i] = tags"]


SCORES = [
    "def entities(tags):  # (type, first, last word) as seqeval reads BIO: an I- after O or another type opens one",
    '    found, prev, prev_type, begin = [], "O", "", 0',
    '    for i, tag in enumerate(list(tags) + ["O"]):',
    "        kind, type_ = tag[0], tag[2:]",
    '        if prev != "O" and (kind in "BO" or type_ != prev_type):',
    "            found.append((prev_type, begin, i - 1))",
    '        if kind == "B" or (kind == "I" and (prev == "O" or type_ != prev_type)):',
    "            begin = i",
    "        prev, prev_type = kind, type_",
    "    return found",
    "",
    "",
    "gold_n, pred_n, hit_n = Counter(), Counter(), Counter()  # an entity counts when its type and its words match",
    "for sentence, tags in zip(test, predicted):",
    '    gold, pred = set(entities(sentence["tags"])), set(entities(tags))',
    "    gold_n.update(t for t, _, _ in gold)",
    "    pred_n.update(t for t, _, _ in pred)",
    "    hit_n.update(t for t, _, _ in gold & pred)",
    "scores = {}",
    "for t in sorted(set(gold_n) | set(pred_n)):",
    "    precision = hit_n[t] / pred_n[t] if pred_n[t] else 0.0",
    "    recall = hit_n[t] / gold_n[t] if gold_n[t] else 0.0",
    "    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0",
    '    scores[t] = {"precision": precision, "recall": recall, "f1": f1, "support": gold_n[t]}',
    '    print(f"{t:6} precision {precision:.3f}  recall {recall:.3f}  F1 {f1:.3f}  ({gold_n[t]} entities)")',
    "hits, found, true = sum(hit_n.values()), sum(pred_n.values()), sum(gold_n.values())",
    "precision, recall = hits / found if found else 0.0, hits / true if true else 0.0",
    'print("overall F1", round(2 * precision * recall / (precision + recall) if precision + recall else 0.0, 4))']

ADDS = ("# What the app adds: validation F1 each epoch (the best epoch's weights kept), the plan against the "
        "time budget, Stop, the curves, the confusion matrix, the hardest sentences, the model kept to tag text.")


def train_ner(inputs: dict, result: dict) -> str:
    r = _recipe(result)
    shapes = bool(r["shape_dim"] or r["shape_input"])
    device = "cuda" if str((result.get("model") or {}).get("device") or "cpu").startswith("cuda") else "cpu"
    load = loading(result.get("model") or {}, "AutoModel", what="encoder")
    data_imports, data = _data(inputs, result, r)
    imports = [*data_imports, "from collections import Counter", *load.imports, "import torch",
               "from torch import nn"]
    third = [i for i in imports if i.split()[1].split(".")[0] in THIRD_PARTY]
    imports = sorted(i for i in imports if i not in third) + sorted(third)
    return script(imports, load.lines, data, _model(r), _batches(r, shapes, device),
                  _training(r, result, shapes, device),
                  _tagging(shapes, device), SCORES + [ADDS])
