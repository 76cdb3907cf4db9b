# Every target bootstraps its own virtualenv: a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SOURCES ?= capabilities
MANIFEST ?= build/manifest.json

.PHONY: all compile check test lint bench clean

all: compile

$(STAMP): pyproject.toml Makefile $(wildcard tests/plugins/*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@for plugin in tests/plugins/*/; do \
	  if [ -f "$$plugin/pyproject.toml" ] && [ ! -f "$$plugin/.not-installed" ]; then \
	    $(BIN)/python -m pip install --quiet "$$plugin" || exit 1; \
	  fi; \
	done
	touch $(STAMP)

compile: $(STAMP)
	$(BIN)/capc compile $(SOURCES) -o $(MANIFEST) --plugins

check: $(STAMP)
	$(BIN)/capc compile $(SOURCES) -o $(MANIFEST) --plugins --check

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check compiler tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf build dist $(VENV) .pytest_cache .mypy_cache .ruff_cache .capc-cache
