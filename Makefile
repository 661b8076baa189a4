# Two commands do everything on a fresh clone: `make run` and `make test`.
# Each creates .venv if missing and installs every dependency from the package registries.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench

$(STAMP): setup.py setup.cfg package.xml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

run: $(STAMP)
	$(BIN)/robodyn demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q test

bench: $(STAMP)
	$(BIN)/python benchmarks/dynamics.py
