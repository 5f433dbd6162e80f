"""Run the test tiers in two lanes at once: each lane is its own pytest process, with its own app
and its own Chromium, so neither waits for the other.

Why: one after the other, the browser tier spends much of its time in Chromium laying out the
11-tab page (one core), while the other tiers spend theirs in models and in apps starting (the
other core). Side by side on CI's two cores the suite takes about as long as its longer lane,
not the sum (the README's Tests section has the numbers). Each lane writes
tests/artifacts/lane-<name>.log, printed whole when the lane ends, so the CI log still reads one
lane after the other.

    python scripts/test_lanes.py              # both lanes side by side (what `make test` runs)
    python scripts/test_lanes.py --serial     # one after the other, as before
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs"]
# About equal halves: alone (d5a4dc7) browser 1,573 s, the rest 1,654 s; side by side (8a3fa80) 2,025 s and 2,314 s.
# Each lane's torch teams keep every core: one thread per lane (OMP_NUM_THREADS=1, which budget.py honours)
# measured slower on this subset side by side (5 browser modules beside tests/integration, 2 cores):
# 463 s with every core, 523 s with one thread each; a lane waiting on its app or Chromium leaves a core idle.
# The Space and generation-server tiers run beside the browser tier (CI, 2,539 s: browser 1,717 s, the rest
# 2,308 s with them): the browser tier's pages now load one tab each, and those two tiers are mostly waits
# on apps and a vLLM server starting.
# A lane may also name one file of another lane's folder: that lane then runs it and the other skips it
# (--ignore). The ZeroGPU e2e test (~200 s: one app with the fake `spaces`, every endpoint once) runs beside the
# browser tier: in the full run at 9850445 the api lane summed 2,263 s of tests and the browser lane 1,897 s.
LANES = {
    "browser": ["tests/browser", "tests/server", "tests/space", "tests/e2e/test_zerogpu.py"],
    "api": ["tests/unit", "tests/integration", "tests/e2e", "tests/fuzz"],
}
# What a lane's shared app runs as (tests/conftest.py lane_app): the browser lane's as on ZeroGPU, so its
# whole-page flows are checked for forwards outside spaces.GPU and the ZeroGPU e2e test needs no app of its own.
LANE_ENV = {"browser": {"TLAB_TEST_APP_ON_ZEROGPU": "1"}}
# Tier folders no lane runs, and why: every tier folder is in exactly one lane or here (tests/unit/scripts/test_lanes.py).
OFF_LANES = {
    "tests/gpu": "needs a CUDA device, which CI has not (every test there skips without one); "
                 "scripts/gpu_check.sh runs it on a lent GPU machine",
}


def lane_args(name: str) -> list[str]:
    """The lane's pytest paths: its folders and files, less the files of its folders that another lane runs."""
    mine = LANES[name]
    theirs = [p for other, paths in LANES.items() if other != name for p in paths if p.endswith(".py")]
    return [*mine, *(f"--ignore={p}" for p in theirs if any(p.startswith(f + "/") for f in mine))]


def _start(name: str, folders: list[str]) -> tuple[subprocess.Popen, Path]:
    log = ARTIFACTS / f"lane-{name}.log"
    # TLAB_TEST_LANE names the lane's own app log (tests/conftest.py): two lanes, two shared apps.
    env = dict(os.environ, TLAB_TEST_LANE=name, **LANE_ENV.get(name, {}))
    with open(log, "w") as out:
        proc = subprocess.Popen([*PYTEST, *lane_args(name)], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    return proc, log


def _report(name: str, proc: subprocess.Popen, log: Path, seconds: float) -> None:
    print(f"\n===== lane {name} ({' '.join(LANES[name])}): exit {proc.returncode} after {seconds:.0f} s =====",
          flush=True)
    sys.stdout.write(log.read_text(errors="replace"))
    sys.stdout.flush()


def _stop(procs: dict) -> None:
    """Ctrl-C or a CI cancel: each pytest gets SIGINT (it tears its apps down), then SIGKILL."""
    for proc in procs.values():
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
    deadline = time.time() + 60
    for proc in procs.values():
        try:
            proc.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)


def _interrupt(*_) -> None:
    """SIGTERM (a CI cancel) ends the run as Ctrl-C does: both lanes are stopped."""
    raise KeyboardInterrupt


def _wait(procs: dict, logs: dict, started: float) -> dict[str, int]:
    """Each lane's exit code, its log printed as it ends."""
    codes: dict[str, int] = {}
    while len(codes) < len(procs):
        for name, proc in procs.items():
            if name not in codes and proc.poll() is not None:
                codes[name] = proc.returncode
                _report(name, proc, logs[name], time.time() - started)
        time.sleep(1)
    return codes


def run(serial: bool) -> int:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    started = time.time()
    codes: dict[str, int] = {}
    procs: dict[str, subprocess.Popen] = {}
    before = signal.signal(signal.SIGTERM, _interrupt)
    try:
        if serial:
            for name, folders in LANES.items():
                t0 = time.time()
                proc, log = _start(name, folders)
                procs = {name: proc}
                codes.update(_wait(procs, {name: log}, t0))
        else:
            logs = {}
            for name, folders in LANES.items():
                procs[name], logs[name] = _start(name, folders)
            codes = _wait(procs, logs, started)
    except KeyboardInterrupt:
        _stop(procs)
        return 130
    finally:
        signal.signal(signal.SIGTERM, before)
    print(f"\n===== lanes: {', '.join(f'{n} exit {c}' for n, c in codes.items())}; "
          f"{time.time() - started:.0f} s in all =====", flush=True)
    return 1 if any(code != 0 for code in codes.values()) else 0


if __name__ == "__main__":
    sys.exit(run(serial="--serial" in sys.argv[1:] or (os.cpu_count() or 1) < 2))
