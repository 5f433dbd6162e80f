"""Every public endpoint at the extremes its contract accepts, on the public-mode app, with a memory watchdog.

Generated from the endpoint registry: each public api_name's contract (components/shell/door.py) turns its valid
call (tests/helpers/api_cases.py) into the most extreme call its ranges accept (longest texts, largest counts, most
beams, steps and sizes: `Contract.extreme`). Each call must be refused at the door within REFUSED_S, or finish
(a result or a readable error) within the time budget plus GRACE_S, with the app's resident memory never more
than CEILING_MB above where it stood before the call. An endpoint without a contract fails. The budget is set
short, live, so the suite checks that the door, the budget and the memory ceiling hold, not how long work takes.
The table of figures goes to tests/artifacts/endpoint_extremes.md, or where TLAB_EXTREMES_TABLE says
(bench/endpoint_extremes.py writes bench/results/endpoint_extremes.md)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.api_cases import CASES
from tests.helpers.app import ARTIFACTS, app_process, live_settings, rss_mb
from tests.helpers import raw

BUDGET_S = 10  # the live time budget while the suite runs
GRACE_S = 15  # a run ends within this of its budget (the contract's longest step)
REFUSED_S = 2.0  # a refusal at the door comes within this
CEILING_MB = 3000  # the most one call may lift the app above where it stood
FIRST_LOAD_S = 40  # a model's first load (from the cache built at set-up) is not the request's work


def _registry() -> dict:
    """api_name -> (contract, argument names): the registry as the app builds it, in this process."""
    import app
    from components.shell import door

    demo = app.build_app()
    out = {}
    for block_fn in demo.fns.values():
        if block_fn.api_name and getattr(block_fn, "api_visibility", "public") == "public":
            out["/" + block_fn.api_name] = door.contract_of(block_fn)
    return out


REGISTRY = _registry()


class Watchdog:
    """The app's resident memory sampled every 0.1 s while a call runs: its peak above the start."""

    def __init__(self, proc):
        self.proc, self.peak, self._stop = proc, 0.0, threading.Event()

    def __enter__(self):
        self.start = rss_mb(self.proc)
        self.peak = self.start
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, rss_mb(self.proc))

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb(self.proc))

    @property
    def rise(self) -> float:
        return self.peak - self.start


def extreme_call(api: str) -> list:
    """The most extreme call, with the bounds a public server has (some depend on the mode: public training
    runs are shorter), read in this process as the app reads them."""
    contract, names = REGISTRY[api]
    valid = dict(zip(names, CASES[api]))
    before = os.environ.get("TLAB_PUBLIC")
    os.environ["TLAB_PUBLIC"] = "1"
    try:
        most = contract.extreme(valid)
    finally:
        if before is None:
            os.environ.pop("TLAB_PUBLIC", None)
        else:
            os.environ["TLAB_PUBLIC"] = before
    return [most[n] for n in names]


def test_every_public_endpoint_declares_a_contract_and_has_a_case():
    assert not [api for api, found in REGISTRY.items() if found is None], "endpoints without a contract"
    assert not set(REGISTRY) - set(CASES), "endpoints without a valid call in tests/helpers/api_cases.py"


ROWS: list[dict] = []


SESSION = "extremes-suite"  # one visitor: what a call leaves (an index, a tiny model) the next may use
PREPARE = ("/build_index", "/train_gpt", "/train_seq2seq")  # their valid calls first: the others then have state


def _door_warm(log: Path, wait_s: float = 180) -> None:
    """Wait for the app's log to say the door's tokenizers are loaded (a door refusal then takes milliseconds)."""
    from backend.hub.sizing import WARM_LINE

    deadline = time.monotonic() + wait_s
    while WARM_LINE not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, "the app never said its door's tokenizers were loaded"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def extremes_app(public_app):
    _door_warm(ARTIFACTS / "app-public.log")
    with live_settings(public_app.url, TLAB_TIME_BUDGET_S=BUDGET_S):
        for api in PREPARE:
            outcome, value = raw.call(public_app.url, api, list(CASES[api]), session_hash=SESSION)
            assert outcome == "complete", (api, value)
        yield public_app.url
    _write_table()


@pytest.mark.parametrize("api", sorted(REGISTRY))
def test_an_endpoint_at_its_extremes_is_refused_at_once_or_ends_in_budget(extremes_app, api):
    data = extreme_call(api)
    proc = app_process(extremes_app)
    started = time.monotonic()
    with Watchdog(proc) as dog:
        outcome, value = raw.call(extremes_app, api, data, session_hash=SESSION, door=True,
                                  timeout=BUDGET_S + GRACE_S + FIRST_LOAD_S + 60)
    seconds = time.monotonic() - started
    ROWS.append({"api": api, "outcome": outcome, "seconds": seconds, "rise_mb": dog.rise,
                 "message": str(value)[:200] if outcome != "complete" else ""})
    assert not raw.UNREADABLE.search(str(value) if outcome != "complete" else ""), f"{api}: unreadable: {value}"
    assert dog.rise <= CEILING_MB, f"{api} lifted the app by {dog.rise:,.0f} MB (ceiling {CEILING_MB:,} MB)"
    if outcome == "refused at the door":
        assert seconds <= REFUSED_S, f"{api}: refused at the door, but after {seconds:.1f} s: {value}"
    else:
        assert seconds <= BUDGET_S + GRACE_S + FIRST_LOAD_S, (
            f"{api} took {seconds:.1f} s with a {BUDGET_S} s budget ({outcome}: {str(value)[:200]})")


def _write_table() -> None:
    path = Path(os.environ.get("TLAB_EXTREMES_TABLE") or ARTIFACTS / "endpoint_extremes.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# Every public endpoint at its extremes (public mode, time budget {BUDGET_S} s)", "",
             "Made by tests/fuzz/test_endpoint_extremes.py: each endpoint's most extreme call its contract accepts; "
             f"refused at the door (within {REFUSED_S:g} s), or ended within the budget + {GRACE_S} s "
             f"(+ {FIRST_LOAD_S} s for a model's first load); memory: the app's peak RSS above its level before the "
             "call.", "", "| endpoint | outcome | seconds | memory rise MB | message |", "|---|---|---|---|---|"]
    for r in sorted(ROWS, key=lambda r: r["api"]):
        message = r["message"].replace("|", "/").replace("\n", " ")
        lines.append(f"| {r['api']} | {r['outcome']} | {r['seconds']:.1f} | {r['rise_mb']:,.0f} | {message} |")
    path.write_text("\n".join(lines) + "\n")
