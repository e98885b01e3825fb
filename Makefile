# tinyattn: the user's entry points. `make test` needs only Python 3.11+ and the package index.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: help venv test clean

help:
	@echo "make test     set up $(VENV) and run the whole test suite"
	@echo "make clean    remove $(VENV) and caches"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "tinyattn needs Python 3.11 or newer: make test PYTHON=python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache host/*.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
