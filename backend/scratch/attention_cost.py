"""The cost of attention as the text grows (the book's chapter 11), measured on this machine.

`measure_lengths` times one attention layer's core (softmax(QK^T/sqrt(d)) V over every head) at
each length, four ways, in one run: full attention written out (it holds the T x T weights:
what `output_attentions` needs), torch's fused `scaled_dot_product_attention` (same numbers,
never holds them), a sliding window computed block by block (only the band), and linear
attention (no T x T at all). Memory is the process's peak resident memory above where it
started (Linux's VmHWM, reset before each call), so it is a measurement, not a formula.
`fit_quadratic` fits time = a + b T + c T^2 where it is drawn: on log-log axes (relative errors).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from backend.engines.scratch import sparse_attention as sa

METHODS = ("full (by hand)", "fused kernel", "sliding window", "linear")
MIN_TOTAL_S, MAX_REPEATS = 0.05, 20  # a call under 50 ms is repeated until 50 ms are spent (20 calls at most)


def sliding_window_blocked(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int,
                           causal: bool) -> torch.Tensor:
    """Sliding-window attention computed block by block: the queries in blocks of `window`, each
    against the keys from `window` before its block to `window` after it (none after on a decoder),
    so the work grows as T x 3 window, not T^2. Same numbers as `sa.masked_attention` with
    `sa.sliding_window_mask`."""
    t, w = q.size(-2), max(1, window)
    out = torch.empty_like(q)
    for start in range(0, t, w):
        end = min(t, start + w)
        lo, hi = max(0, start - w), end if causal else min(t, end + w)
        i = torch.arange(start, end)[:, None]
        j = torch.arange(lo, hi)[None, :]
        mask = (i - j).abs() <= w
        if causal:
            mask &= j <= i
        out[..., start:end, :], _ = sa.masked_attention(q[..., start:end, :], k[..., lo:hi, :], v[..., lo:hi, :],
                                                        mask)
    return out


def _rss(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _trim() -> None:
    """Hand freed heap memory back to the system (glibc's malloc_trim), so the next call's memory
    shows as new pages rather than reused ones; a no-op where there is no glibc."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def peak_bytes(fn) -> tuple[float, int | None]:
    """(seconds, peak resident bytes above the start) of one call of `fn`. Linux only for the memory
    (None elsewhere): writing 5 to /proc/self/clear_refs resets the peak (VmHWM)."""
    _trim()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = _rss("VmRSS")
    except OSError:
        base = None
    t0 = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t0
    top = _rss("VmHWM") if base is not None else None
    return seconds, (max(0, top - base) if top is not None else None)


def timed_calls(fn, repeats: int) -> list[float]:
    """Seconds of `repeats` calls, and more while they add up to under MIN_TOTAL_S (a short call is
    repeated, so a busy CPU's pause is not the only try), MAX_REPEATS at most."""
    times: list[float] = []
    while len(times) < repeats or (len(times) < MAX_REPEATS and sum(times) < MIN_TOTAL_S):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def _runner(method: str, q, k, v, window: int, causal: bool):
    if method == "full (by hand)":
        mask = sa.causal_mask(q.size(-2)) if causal else None
        return lambda: sa.masked_attention(q, k, v, mask)
    if method == "fused kernel":
        return lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if method == "sliding window":
        return lambda: sliding_window_blocked(q, k, v, window, causal)
    if causal:  # chunked, as a kernel does it: the running sums are never all kept
        return lambda: sa.linear_attention_chunked(q, k, v, chunk=window)
    return lambda: sa.linear_attention(q, k, v, causal)


def measure_lengths(lengths: list[int], heads: int, head_dim: int, window: int = 64, causal: bool = False,
                    repeats: int = 3, seed: int = 0, check=None) -> list[dict]:
    """One row per (length, method): the fastest of `repeats` calls or more (a shared CPU only ever adds
    time: the minimum is the least disturbed call, as `timeit` advises) and the peak memory of one more call,
    on random q, k, v of shape (1, heads, T, head_dim), float32, one torch thread (fair on a shared CPU).
    `check(label)` is called between measurements (the request's budget)."""
    gen = torch.Generator().manual_seed(seed)
    rows = []
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.inference_mode():
            for t in lengths:
                q, k, v = (torch.randn(1, heads, t, head_dim, generator=gen) for _ in range(3))
                for method in METHODS:
                    if check is not None:
                        check(f"measured {len(rows)} of {len(lengths) * len(METHODS)}")
                    fn = _runner(method, q, k, v, window, causal)
                    fn()  # warm-up (first-call allocations)
                    times = timed_calls(fn, repeats)
                    _, mem = peak_bytes(fn)  # memory apart: handing memory back slows the call that follows
                    rows.append({"tokens": t, "method": method, "seconds": min(times), "calls": len(times),
                                 "peak_mb": round(mem / 1e6, 2) if mem is not None else None,
                                 "weights_mb": round(heads * t * t * 4 / 1e6, 2)})
    finally:
        torch.set_num_threads(before)
    return rows


FIT_TOLERANCE = 0.25  # a fitted time more than 25% off a measured one misses it: the curve is not drawn there


def fit_quadratic(lengths, seconds) -> dict:
    """time = a + b T + c T^2 with a, b, c >= 0 (a time has no negative part), fitted and judged where it is
    drawn, on log-log axes: least squares of the RELATIVE error (pred / measured - 1), so a 0.1 ms point
    counts as much as a 100 ms one (plain least squares in seconds let the longest texts decide and missed the
    short ones by 300%); every subset of the three terms is tried and the best non-negative one kept (the exact
    non-negative least squares for three terms). Also: `errors`, the relative error at each length; `r2`, R^2
    of log(time) (the plot's own scale); `holds`, each error within FIT_TOLERANCE; the share of the longest time
    the T^2 term explains; the log-log slope between the two longest texts (2 quadratic, 1 linear)."""
    t = np.asarray(lengths, dtype=float)
    y = np.asarray(seconds, dtype=float)
    if len(t) < 3:
        raise ValueError("a quadratic fit needs at least 3 lengths")
    cols = np.stack([np.ones_like(t), t, t * t], axis=1)
    scaled = cols / y[:, None]
    best = None
    for keep in ((0, 1, 2), (0, 2), (1, 2), (2,), (0, 1), (0,), (1,)):
        coef, *_ = np.linalg.lstsq(scaled[:, keep], np.ones_like(y), rcond=None)
        if (coef < 0).any():
            continue
        full = np.zeros(3)
        full[list(keep)] = coef
        sse = float(((scaled @ full - 1) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, full)
    a, b, c = best[1]
    pred = a + b * t + c * t * t
    errors = pred / y - 1
    ly, lp = np.log(y), np.log(np.maximum(pred, 1e-300))
    ss_res, ss_tot = float(((ly - lp) ** 2).sum()), float(((ly - ly.mean()) ** 2).sum())
    slope = math.log(y[-1] / y[-2]) / math.log(t[-1] / t[-2]) if y[-1] > 0 and y[-2] > 0 and t[-1] != t[-2] else None
    worst = int(np.argmax(np.abs(errors)))
    return {"a": float(a), "b": float(b), "c": float(c), "r2": 1 - ss_res / ss_tot if ss_tot > 0 else 1.0,
            "space": "log-log", "errors": [round(float(e), 4) for e in errors],
            "holds": [bool(abs(e) <= FIT_TOLERANCE) for e in errors], "tolerance": FIT_TOLERANCE,
            "max_relative_error": float(np.abs(errors).max()), "worst_tokens": int(t[worst]),
            "quadratic_share_at_longest": float(c * t[-1] ** 2 / pred[-1]) if pred[-1] > 0 else None,
            "loglog_slope_last": slope}


def slower_than_full(rows: list[dict]) -> dict[str, dict]:
    """Per cheaper method, the lengths where it took longer than full attention written out, and the first
    length from which it stays faster (None if it never does): where its fixed costs outweigh what it saves."""
    full = {r["tokens"]: r["seconds"] for r in rows if r["method"] == METHODS[0]}
    out = {}
    for method in METHODS[1:]:
        mine = sorted((r["tokens"], r["seconds"]) for r in rows if r["method"] == method and r["tokens"] in full)
        slower = [t for t, s in mine if s > full[t]]
        if slower:
            after = [t for t, _ in mine if t > max(slower)]
            out[method] = {"tokens": slower, "faster_from": after[0] if after else None,
                           "ratios": [round(s / full[t], 3) for t, s in mine if t in slower]}
    return out
