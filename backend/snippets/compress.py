"""The Efficiency tab's chapter 8 snippet (`/compress`): the run's variants read from the app's cache (named from
its documented place, TLAB_CACHE_DIR, never the server's path): the fine-tuned teacher, the distilled student and
the pruned copies as folders (the encoder and a linear head on its mean-pooled states), the student's int8 copy by
`torch.ao.quantization.quantize_dynamic`, the ONNX files through `onnxruntime.InferenceSession`; each one's accuracy
on the shipped emotion test texts. The app's distillation, pruning and export made those files; the snippet reads
them, it does not retrain."""

from __future__ import annotations

import logging
from pathlib import Path

from backend.engines.compression.distill import MAX_LENGTH  # the students' and the teacher's token window
from backend.engines.compression.perf_bench import ACCURACY_BATCH
from backend.hub import compress_builder
from backend.runtime import config
from backend.snippets.checkpoint import CACHE_EXPRESSION, in_cache
from backend.snippets.efficiency import INT8_WARNINGS
from backend.snippets.text import literal, script

_log = logging.getLogger("tlab.snippets")
TEST_FILE = "assets/data/emotion/test.jsonl"  # the shipped test split, in the app's repository
ONNX = {"student_onnx": "student.onnx", "student_onnx_int8": "student_int8.onnx"}
ADDS = ("# What the app adds: the distillation (its temperature and alpha search), the pruning and the ONNX export "
        "that made these files (backend/engines/compression), the latency (batch 1, one query, many runs) and size "
        "of every variant measured together in one table, and the claims (the fastest variant, each accuracy change "
        "and whether it is within noise).")


def _folders(run_id: str) -> tuple[str, str]:
    """(teacher folder, run folder) as expressions from the cache's documented place."""
    try:
        base = compress_builder.cached(compress_builder.base_location())
        if base is None:
            raise FileNotFoundError("the chapter 8 default run is not built")
        teacher = in_cache(base) + f" / {compress_builder.TEACHER_DIR!r}"
        if run_id in ("", "default"):
            return teacher, in_cache(base) + f" / {compress_builder.RUN_DIR!r}"
        return teacher, in_cache(Path(config.get_settings().cache_dir) / compress_builder.LIVE_DIR / run_id)
    except Exception:  # the default run not built here: the layout, by name
        _log.info("no chapter 8 folder for the snippet", exc_info=True)
        return ("CACHE / 'trained' / 'compress-emotion-v1-…' / 'teacher'",
                "CACHE / 'trained' / 'compress-emotion-v1-…' / 'run'")


def compress(inputs: dict, result: dict) -> str:
    keys = [r.get("key", "") for r in result.get("rows") or []]
    teacher, run = _folders(str(result.get("run_id") or "default"))
    load = [
        "# the chapter 8 run's files, in the app's cache (built at set-up; a live run's under compress-live/)",
        f"teacher_folder = {teacher}",
        f"run = {run}",
        'tokenizer = AutoTokenizer.from_pretrained(teacher_folder)',
        'labels = json.loads((teacher_folder / "labels.json").read_text())',
        "",
        "class Classifier(torch.nn.Module):  # the app's classifier: the encoder, a linear head on its mean-pooled states",
        "    def __init__(self, folder):",
        "        super().__init__()",
        "        self.encoder = AutoModel.from_pretrained(folder)",
        "        self.head = torch.nn.Linear(self.encoder.config.hidden_size, len(labels))",
        '        self.head.load_state_dict(load_file(str(folder / "head.safetensors")))',
        "",
        "    def forward(self, input_ids, attention_mask, token_type_ids=None):",
        "        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,",
        "                              token_type_ids=token_type_ids).last_hidden_state",
        "        m = attention_mask.unsqueeze(-1).to(hidden.dtype)",
        "        return self.head((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9))"]
    data = [
        f"# the shipped emotion test split ({TEST_FILE} in the app's repository: run from a checkout)",
        f"rows = [json.loads(line) for line in open({TEST_FILE!r}, encoding=\"utf-8\") if line.strip()]",
        "texts, gold = [r[\"text\"] for r in rows], [labels.index(r[\"label\"].upper()) for r in rows]",
        "",
        f"def accuracy(logits_of, batch={ACCURACY_BATCH}):  # argmax of the logits against the labels, "
        f"{ACCURACY_BATCH} texts at a time",
        "    preds = []",
        "    for s in range(0, len(texts), batch):",
        f'        enc = tokenizer(texts[s:s + batch], padding=True, truncation=True, max_length={MAX_LENGTH}, '
        'return_tensors="pt")',
        "        preds += np.asarray(logits_of(enc)).argmax(-1).tolist()",
        "    return float(np.mean(np.array(preds) == np.array(gold)))",
        "",
        "def torch_logits(model):",
        "    def run(enc):",
        "        with torch.inference_mode():",
        "            return model(**enc).float().numpy()",
        "    return run",
        "",
        "variants = {}"]
    torch_folders = [(k, "teacher_folder" if k == "teacher" else "run / 'student'" if k in ("student", "student_int8")
                      else f"run / {('pruned-' + k[len('pruned_'):])!r}")
                     for k in keys if k in ("teacher", "student") or k.startswith("pruned_")]
    body = [f"variants[{k!r}] = torch_logits(Classifier({folder}).eval())" for k, folder in torch_folders]
    imports = ["import json", "import os", "from pathlib import Path", "import numpy as np", "import torch",
               "from safetensors.torch import load_file", "from transformers import AutoModel, AutoTokenizer"]
    if "student_int8" in keys:
        imports.append("from torch.ao.quantization import per_channel_dynamic_qconfig")
        body += [*INT8_WARNINGS, "int8 = torch.ao.quantization.quantize_dynamic(Classifier(run / 'student').eval(), "
                 "{torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)",
                 "variants['student_int8'] = torch_logits(int8)"]
    onnx = [k for k in keys if k in ONNX]
    if onnx:
        imports.insert(4, "import onnxruntime")
        body += ["", "def onnx_logits(path):  # the exported graph: input_ids, attention_mask, token_type_ids -> logits",
                 '    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])',
                 "    def run(enc):",
                 "        ids = enc[\"input_ids\"].numpy()",
                 "        feed = {i.name: enc[i.name].numpy().astype(np.int64) if i.name in enc else np.zeros_like(ids)",
                 "                for i in session.get_inputs()}",
                 '        return session.run(["logits"], feed)[0]',
                 "    return run",
                 ""]
        body += [f"variants[{k!r}] = onnx_logits(run / {ONNX[k]!r})" for k in onnx]
    body += ["", "accuracies = {name: accuracy(logits_of) for name, logits_of in variants.items()}",
             f"for name in [k for k in {literal(keys)} if k in accuracies]:  # in the page's order",
             "    acc = accuracies[name]",
             "    print(f\"{name:>20}  accuracy {acc:.4f}\")"]
    note = []
    if not keys:
        note = [f"# this result has no variants yet (step {literal(inputs.get('through') or 'teacher')})"]
    cache = [f"CACHE = {CACHE_EXPRESSION}"]
    return script(imports, cache if "CACHE /" in teacher else [], load, data, note + body, [ADDS])
