"""Chapter 8: making a classifier smaller and faster, and measuring what it cost.

`distill` trains a student on a teacher's soft labels, `quantize` makes int8 copies (dynamic
quantization, also used for generation), `onnx_ort` exports to ONNX Runtime and quantizes the
graph, `prune` removes weights by magnitude, `perf_bench` times every variant the same way, and
`pipeline` chains the steps on one teacher, resumable step by step.
"""
