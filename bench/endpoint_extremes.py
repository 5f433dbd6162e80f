"""Every public endpoint at its extremes, as the contract suite runs it (tests/fuzz/test_endpoint_extremes.py), with
its figures (refused or finished, seconds, MB) written to bench/results/endpoint_extremes.md.

  .venv/bin/python bench/endpoint_extremes.py    # a public-mode app of its own, ~5 min
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TLAB_EXTREMES_TABLE": str(ROOT / "bench" / "results" / "endpoint_extremes.md")}
    sys.exit(subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
                              "tests/fuzz/test_endpoint_extremes.py"], cwd=ROOT, env=env))
