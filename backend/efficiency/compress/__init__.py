"""The chapter 8 benchmark (the Efficiency tab's "compress" section): a tab does
`from backend.efficiency import compress` and calls `compress.compress(...)`, `compress.compress_predict(...)`,
`compress.compress_download(...)`. Model-level pieces live in backend.engines.compression (distill,
perf_bench, onnx_ort, prune, pipeline); the default run is built at set-up by backend.hub.compress_builder."""

from backend.efficiency.compress.api import (
    DEFAULT_ALPHA,
    DEFAULT_LAYERS,
    DEFAULT_SPARSITY,
    DEFAULT_TEMPERATURE,
    LIVE_EPOCHS,
    RUNS,
    THROUGH,
    compress,
    default_run,
)
from backend.efficiency.compress.use import compress_download, compress_predict, variant_keys

__all__ = ["DEFAULT_ALPHA", "DEFAULT_LAYERS", "DEFAULT_SPARSITY", "DEFAULT_TEMPERATURE", "LIVE_EPOCHS", "RUNS", "THROUGH",
           "compress", "compress_download", "default_run", "compress_predict", "variant_keys"]
