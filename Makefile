# The two commands: `make run` serves the demo, `make test` runs the whole suite.
# Both set everything up on a fresh machine with Python 3.11+ (PYTHON=/path/to/python3.11 to choose).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
ENGINE_PORT ?= 8765
# make run's own secret key, engine token and brain secret: made at its first run into this
# git-ignored file (0600), read at every run after; its steps and processes run under umask 077,
# so the databases and WAL files they create are the owner's only (webui/local_secrets.py).
SECRETS_FILE ?= .make-run-secrets
WITH_SECRETS = $(BIN)/python -m webui.local_secrets $(SECRETS_FILE) --

.PHONY: run test bench bench-quick lint format migrate clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed: run make with PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.run-installed: requirements.txt requirements-run.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-run.txt
	@touch $@

$(VENV)/.dev-installed: requirements.txt requirements-run.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	@touch $@

run: export DJANGO_DEBUG ?= false
run: export DJANGO_ALLOWED_HOSTS ?= 127.0.0.1,localhost,[::1],$(HOST)
run: export PIPPA_MEMORY_URL ?= http://127.0.0.1:$(ENGINE_PORT)
run: export ENGINE_PORT := $(ENGINE_PORT)
run: export ENGINE_OPTIONS ?=
run: export WEBUI_OFFLINE_PACE_SECONDS ?= 0.05
run: $(VENV)/.run-installed
	$(WITH_SECRETS) $(BIN)/python manage.py migrate --noinput
	$(WITH_SECRETS) $(BIN)/python manage.py load_demo --url http://$(HOST):$(PORT) --login-file .demo-login --member-file .demo-member
	WEBUI_ADDR=$(HOST):$(PORT) PIPPA_ENGINE_DEMO_MEMBER="$$(cat .demo-member)" PATH="$(CURDIR)/$(BIN):$$PATH" exec $(WITH_SECRETS) $(BIN)/python -m webui.supervision --procfile Procfile

test: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n auto --dist loadgroup
	@# The host alone, in a copy of the tree without the plug-in's and the engine's folders.
	@tree=$$(mktemp -d) && trap 'rm -rf "$$tree"' EXIT && \
	  tar -c --exclude=./.git --exclude=./.venv --exclude=./pippa_memory --exclude=./reference_engine \
	    --exclude='*.sqlite3*' --exclude=__pycache__ --exclude=.pytest_cache --exclude=.ruff_cache . | tar -x -C "$$tree" && \
	  echo "host-only suite in $$tree (no pippa_memory/, no reference_engine/)" && cd "$$tree" && \
	  $(CURDIR)/$(BIN)/python -m pytest -n auto --dist loadgroup tests/webui tests/host_only --ds=tests.settings_host_only

# Benchmarks (not tests): every script in bench/, SQLite and PostgreSQL, each measuring its arms side
# by side in one run; docs/BENCHMARKS.md is written from their own output, and every figure is
# printed next to its target with met or missed. bench-quick runs them all with few rounds.
bench: $(VENV)/.dev-installed
	cd bench && ../$(BIN)/python write_benchmarks.py

bench-quick: $(VENV)/.dev-installed
	cd bench && ../$(BIN)/python write_benchmarks.py --quick --output $(CURDIR)/BENCHMARKS.quick.md

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(VENV)/.dev-installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) staticfiles .pytest_cache
