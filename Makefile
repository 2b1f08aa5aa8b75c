# The README's two commands are `make demo` and `make test`; everything else supports them.
# `make` alone creates .venv (then `. .venv/bin/activate` puts gin-arena and python on PATH).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
HASH := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(HASH)
BENCH_STAMP := $(VENV)/.installed-bench-$(HASH)

.DEFAULT_GOAL := venv
.PHONY: venv demo test lint typecheck bench bench-extra clean services

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-[0-9]* && touch $@

# OpenSpiel and RLCard (~52 MB of downloads, ~180 MB installed): the engine benchmark and the
# cross-check tests. `make test` installs them under CI=true, where those tests must run.
$(BENCH_STAMP): $(STAMP)
	@$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@rm -f $(VENV)/.installed-bench-* && touch $@

bench-extra: $(BENCH_STAMP)

demo: $(STAMP)
	$(BIN)/gin-arena demo --port $(PORT)

test: $(STAMP)
	@case "$${CI:-}" in [Tt][Rr][Uu][Ee]) $(MAKE) --no-print-directory bench-extra;; esac
	@scripts/ensure-services.sh
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=30

lint: $(STAMP)
	$(BIN)/ruff check arena workers tests benchmarks
	$(BIN)/mypy

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
