"""The speeds the door prices requests with (backend/runtime/speeds.py REFERENCE), measured again on this
machine with the local profile's real models, alone (the door halves them: two jobs share the cores).

  .venv/bin/python bench/contract_speeds.py      # ~1 min; writes bench/results/contract_speeds.md

Each figure is the median of 3 timed runs after one warm-up, as units per second:
- decoder_tokens: SmolLM2-135M reading a 1,024-token text in chunks of 128 into a key/value cache (the prefill);
- decoder_steps: greedy new tokens a second after a 16-token prompt (64 new, one sequence);
- encoder_tokens: all-MiniLM-L6-v2 forward over 8 windows of 256 tokens;
- encoder_train_tokens: the same batch, forward and backward;
- e5_tokens: multilingual-e5-small forward over 8 windows of 256 tokens.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend import hub  # noqa: E402
from backend.engines.generation.prefill import prefilled  # noqa: E402
from backend.runtime import speeds  # noqa: E402


def _median(fn, units: float) -> float:
    fn()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return units / statistics.median(times)


def measure() -> dict:
    dec = hub.load("decoder")
    ids = torch.randint(100, 20000, (1, 1025))
    out = {"decoder_tokens": _median(lambda: prefilled(dec.model, ids), 1024)}
    prompt = dec.tokenizer("Once upon a time in a small harbour town,", return_tensors="pt")
    with torch.inference_mode():
        gen = lambda: dec.model.generate(**prompt, max_new_tokens=64, min_new_tokens=64, do_sample=False)  # noqa: E731
        out["decoder_steps"] = _median(gen, 64)
    enc = hub.load("encoder")
    batch = torch.randint(1000, 20000, (8, 256))
    with torch.inference_mode():
        out["encoder_tokens"] = _median(lambda: enc.model(input_ids=batch), 8 * 256)

    def train_step():
        enc.model.zero_grad()
        enc.model(input_ids=batch).last_hidden_state.mean().backward()

    out["encoder_train_tokens"] = _median(train_step, 8 * 256)
    e5 = hub.load("multilingual")
    with torch.inference_mode():
        out["e5_tokens"] = _median(lambda: e5.model(input_ids=batch), 8 * 256)
    return out


def main() -> None:
    got = measure()
    lines = ["# The door's speeds, measured (bench/contract_speeds.py)", "",
             "Units per second with the local profile's models, alone, median of 3 after a warm-up; the door uses "
             f"half of the reference (SHARED_CORES = {speeds.SHARED_CORES}), or half of what the process measured.", "",
             "| kind | measured here | reference in speeds.py | measured / reference |", "|---|---|---|---|"]
    for kind, value in got.items():
        ref = speeds.REFERENCE[kind]
        lines.append(f"| {kind} | {value:,.1f} | {ref:,.1f} | {value / ref:.2f} |")
    text = "\n".join(lines) + "\n"
    (ROOT / "bench" / "results" / "contract_speeds.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
