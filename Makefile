# Cairn's two entry points: `make run` and `make test`. Both build .venv from
# pyproject.toml first, and rebuild it when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test lint typecheck unit bench screenshots clean

run: $(VENV)/.installed-run
	$(BIN)/cairn

test: $(VENV)/.installed-dev lint typecheck unit

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

unit: $(VENV)/.installed-dev
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

bench: $(VENV)/.installed-dev
	$(BIN)/python -m benchmarks.journal_append
	$(BIN)/python -m benchmarks.adapter_throughput
	$(BIN)/python -m benchmarks.context_overhead
	$(BIN)/python -m benchmarks.cache_strategies
	$(BIN)/python -m benchmarks.ui_speed
	$(BIN)/python -m benchmarks.tool_latency
	$(BIN)/python -m benchmarks.mcp_latency
	$(BIN)/python -m benchmarks.compaction_cost

$(VENV)/.created:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Cairn needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	touch $@

$(VENV)/.installed-run: $(VENV)/.created pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.created pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-run

screenshots: $(VENV)/.installed-dev
	$(BIN)/python -m tools.screenshots --out screenshots

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
