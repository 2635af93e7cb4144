# Cairn's two entry points: `make run` and `make test`. Both build .venv from
# pyproject.toml first, and rebuild it when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Cairn's own modules compiled ahead: where PYTHONDONTWRITEBYTECODE is set, Python would
# otherwise compile them again at every start (a fifth of a second of each launch).
COMPILE = $(BIN)/python -m compileall -q desktop host ui

PUBLIC_MCP := .mcp-public

.PHONY: public-mcp run test lint typecheck unit bench screenshots clean package package-test engine run-engine

run: $(VENV)/.installed-run run-engine
	$(COMPILE)
	$(BIN)/cairn

test: $(VENV)/.installed-dev engine public-mcp lint typecheck unit

# The built-in engine (llama.cpp's llama-server) into .engine/<key>/: compiled on first use
# (7 to 20 minutes on 2 cores, by the machine), copied from the user's cache after that. `make run` goes on
# without it when this machine cannot compile, and Cairn says what to install; the tests
# need it.
engine: $(VENV)/.created
	$(BIN)/python -m tools.build_engine

run-engine: $(VENV)/.created
	-$(BIN)/python -m tools.build_engine

# MCP servers nobody at Cairn wrote, which the tests run Cairn against: the reference
# everything, filesystem and memory servers from npm, and mcp-server-time and mcp-server-git
# from PyPI in a venv of their own (they bring their own mcp SDK). Pinned in tests/public_mcp/.
public-mcp: $(PUBLIC_MCP)/.installed

$(PUBLIC_MCP)/.installed: tests/public_mcp/package.json tests/public_mcp/package-lock.json tests/public_mcp/requirements.txt
	mkdir -p $(PUBLIC_MCP)
	cp tests/public_mcp/package.json tests/public_mcp/package-lock.json $(PUBLIC_MCP)/
	cd $(PUBLIC_MCP) && npm ci --no-audit --no-fund --loglevel=error
	test -x $(PUBLIC_MCP)/venv/bin/python || $(PYTHON) -m venv $(PUBLIC_MCP)/venv
	$(PUBLIC_MCP)/venv/bin/python -m pip install --quiet -r tests/public_mcp/requirements.txt
	touch $@

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# The tests' helper modules too: hundreds of the suite's child processes import them.
unit: $(VENV)/.installed-dev
	$(COMPILE) tests
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

bench: $(VENV)/.installed-dev engine public-mcp
	$(COMPILE)
	$(BIN)/python -m benchmarks.journal_append
	$(BIN)/python -m benchmarks.adapter_throughput
	$(BIN)/python -m benchmarks.context_overhead
	$(BIN)/python -m benchmarks.cache_strategies
	$(BIN)/python -m benchmarks.ui_speed
	$(BIN)/python -m benchmarks.long_replies
	$(BIN)/python -m benchmarks.long_chat
	$(BIN)/python -m benchmarks.tool_latency
	$(BIN)/python -m benchmarks.mcp_latency
	$(BIN)/python -m benchmarks.mcp_public
	$(BIN)/python -m benchmarks.mcp_idle_servers
	$(BIN)/python -m benchmarks.compaction_cost
	$(BIN)/python -m benchmarks.versions_speed
	$(BIN)/python -m benchmarks.math_render
	$(BIN)/python -m benchmarks.local_engine

$(VENV)/.created:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Cairn needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	touch $@

# The math extra too, as the installers carry it: TeX in replies drawn, not shown as code.
$(VENV)/.installed-run: $(VENV)/.created pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[model,math]'
	touch $@

$(VENV)/.installed-dev: $(VENV)/.created pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,model,math]'
	touch $@ $(VENV)/.installed-run

$(VENV)/.installed-package: $(VENV)/.installed-dev pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,package]'
	touch $@

# The Linux packages (.deb, portable .tar.gz, an AppDir for appimagetool) into dist/;
# packaging/README.md has the Windows and macOS recipes. Takes a few minutes.
package: $(VENV)/.installed-package engine
	$(BIN)/python packaging/build.py

# The release check: unpack the .deb into a temporary root and run the frozen Cairn.
package-test: package
	sh packaging/linux/test-prerequisites.sh
	CAIRN_PACKAGE_TEST=1 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest tests/test_package.py -v -p no:cacheprovider

screenshots: $(VENV)/.installed-dev
	$(BIN)/python -m tools.screenshots --out screenshots

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .engine
