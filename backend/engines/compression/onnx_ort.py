"""A classifier exported to ONNX and run by ONNX Runtime (the book's chapter 8), and ONNX
Runtime's own dynamic int8 quantization of that graph.

Export: `torch.onnx.export(..., dynamo=False)`, the TorchScript exporter. torch 2.13's default
(dynamo=True) needs `onnxscript` (and its `onnx_ir`), two more packages for the same graph; the
TorchScript path needs only `onnx`, which ONNX Runtime's quantizer needs anyway. Batch and
sequence axes are dynamic. The session runs with every graph optimisation on
(ORT_ENABLE_ALL) and as many intra-op threads as torch uses, so the comparison is fair.
`quantize_dynamic` (onnxruntime.quantization) stores the MatMul weights as int8 (QInt8,
per-tensor, as the book does) and quantizes activations per call.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from backend.engines.compression.distill import MAX_LENGTH  # the token window the models were trained with

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class _LogitsOnly(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids, attention_mask, token_type_ids)[0]


def export(model: nn.Module, tokenizer, path: Path, opset: int = 17) -> Path:
    """`model(input_ids, attention_mask, token_type_ids) -> (logits, ...)` as an ONNX file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["an example sentence", "a second, longer example sentence to pad"], padding=True,
                       return_tensors="pt")
    args = tuple(sample[k] if k in sample else torch.zeros_like(sample["input_ids"]) for k in INPUTS)
    axes = {k: {0: "batch", 1: "sequence"} for k in INPUTS}
    axes["logits"] = {0: "batch"}
    wrapped = _LogitsOnly(model).eval()
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(wrapped, args, str(path), input_names=list(INPUTS), output_names=["logits"],
                          dynamic_axes=axes, opset_version=opset, dynamo=False)
    return path


def session(path: Path, threads: int | None = None, optimized_path: Path | None = None):
    """An ONNX Runtime CPU session on `path` with all graph optimisations (saved to
    `optimized_path` when given, so the optimised graph can be inspected)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads or torch.get_num_threads()
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    if optimized_path is not None:
        opts.optimized_model_filepath = str(optimized_path)
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def predictor(sess, tokenizer, max_length: int = MAX_LENGTH):
    """`predict(texts) -> logits` through `sess`."""
    names = {i.name for i in sess.get_inputs()}

    def predict(texts: list[str]) -> np.ndarray:
        enc = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="np")
        feed = {k: (enc[k] if k in enc else np.zeros_like(enc["input_ids"])).astype(np.int64)
                for k in INPUTS if k in names}
        return sess.run(["logits"], feed)[0]

    return predict


def quantize(src: Path, dst: Path) -> Path:
    """ONNX Runtime's dynamic int8 quantization of the graph in `src`, written to `dst`."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)  # "consider pre-processing": a hint for static (calibrated) quantization
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8)
    finally:
        logging.disable(previous)
    return Path(dst)


def versions() -> dict:
    import onnx
    import onnxruntime

    return {"onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__, "torch": torch.__version__.split("+")[0]}
