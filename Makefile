# The two commands of the README: `make run` and `make test`. Each creates the virtualenv it needs.
PYTHON ?= python3
VENV ?= .venv
# pytest-xdist workers: one per core of the 2-core CI machine (the suite waits on I/O much of the time); tests marked
# `serial` measure timing a loaded machine would distort, so they run alone afterwards.
PYTEST_WORKERS ?= 2
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test reliability audit lint check clean

# Vigil supports CPython 3.11 and 3.12 (pyproject's requires-python). A wrong interpreter, or a .venv left by one,
# stops here with what to do instead of failing deep inside pip.
SUPPORTED := import sys; v = sys.version_info[:2]; sys.exit(0 if (3, 11) <= v < (3, 13) else \
	f"Vigil needs Python 3.11 or 3.12; {sys.executable} is {v[0]}.{v[1]}. Run: PYTHON=python3.12 make run")

$(STAMP): pyproject.toml
	@$(PYTHON) -c '$(SUPPORTED)'
	@if [ -x $(BIN)/python ] && ! $(BIN)/python -c '$(SUPPORTED)' 2>/dev/null; then \
		echo "$(VENV) was made by an unsupported Python: run 'make clean', then this command again." >&2; exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

## Install and serve Vigil on http://127.0.0.1:8000 (SQLite in ./vigil-data; no other service needed).
run: $(STAMP)
	$(BIN)/vigil serve

## Run the whole test suite against SQLite and PostgreSQL (starts local PostgreSQL if it is down, installs
## Debian's Chromium for the console tests if it is missing).
test: $(STAMP)
	bash scripts/ensure-postgres.sh
	bash scripts/ensure-chromium.sh
	$(BIN)/pytest -n $(PYTEST_WORKERS) -m "not serial and not reliability_long" $(PYTEST_ARGS)
	$(BIN)/pytest -m "serial and not reliability_long" $(PYTEST_ARGS) || [ $$? -eq 5 ]  # 5: no serial test selected

## The whole reliability suite (tests/reliability: the fast part of `make test` plus the long scenarios, about
## 15 minutes), then its table in docs/reliability.md.
reliability: $(STAMP)
	bash scripts/ensure-postgres.sh
	rm -f .reliability/results.jsonl
	$(BIN)/pytest -n $(PYTEST_WORKERS) -m "not serial" tests/reliability $(PYTEST_ARGS)
	$(BIN)/pytest -m serial tests/reliability $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(BIN)/python -m tests.reliability.report

## Known vulnerabilities in every installed dependency (direct pins and what they pull in), by pip-audit. Needs
## the PyPI JSON API or api.osv.dev; neither is reachable from the CI machines, so CI does not run it.
audit: $(STAMP)
	$(BIN)/pip-audit --strict --skip-editable --progress-spinner off

## Static checks: ruff (lint + format), mypy --strict and the import contracts of docs/architecture.md.
lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

check: lint test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
