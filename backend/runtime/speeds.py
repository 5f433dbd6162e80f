"""This machine's speed for the kinds of work a contract prices (backend/runtime/contract.py): what the door
multiplies a request's size by to say how long it would take, before it runs.

Each speed starts from a figure measured on the project's reference machine (2 cores, torch on CPU, fp32,
`bench/contract_speeds.py` prints them again) and halved, because two jobs share the cores (`budget.fair_threads`);
once this process has done such work, what it measured (`record`, smoothed in `rates.RATES`) replaces it. So on a
faster machine the door admits more after the first runs, and on a slower one it refuses sooner.
"""

from __future__ import annotations

from backend.runtime.rates import RATES

SHARED_CORES = 0.5  # two jobs at once each get half the cores: an estimate assumes the busy case

# units per second on the reference machine, alone (bench/results/contract_speeds.md, 2026-12-07, load 1.3)
REFERENCE = {
    "decoder_tokens": 440.0,  # SmolLM2-135M prompt tokens read per second (batch 1, chunks of 128 into a cache)
    "decoder_steps": 19.0,  # new tokens per second, one sequence (greedy, short context)
    "encoder_tokens": 6500.0,  # all-MiniLM-L6-v2 tokens per second (8 windows of 256 tokens)
    "encoder_train_tokens": 2300.0,  # the same encoder, forward + backward
    "e5_tokens": 3700.0,  # multilingual-e5-small (12 layers) tokens per second
}


def per_s(kind: str) -> float:
    """Units of `kind` this server does per second under load: measured here, or the reference's half."""
    measured = RATES.per_s(("speed", kind))
    return measured * SHARED_CORES if measured else REFERENCE[kind] * SHARED_CORES


def seconds(kind: str, units: float) -> float:
    return float(units) / per_s(kind)


def record(kind: str, units: float, seconds_taken: float) -> None:
    """What a run measured (units of `kind` in `seconds_taken`, alone or not): later estimates use it."""
    RATES.add(("speed", kind), units, seconds_taken)
