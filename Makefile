# redstring: `make serve` and `make test` are the quick start; both create the venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv lint test test-lowest unit bench-quality serve serve-neo4j neo4j-start neo4j-stop neo4j-dev-stop clean graphiql e2e e2e-setup

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,neo4j-rust,bench]'
	touch $(STAMP)

lint: venv
	$(BIN)/ruff check src tests bench examples hatch_build.py
	$(BIN)/ruff format --check src tests bench examples hatch_build.py
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: venv
	$(BIN)/pytest -m "not neo4j"

# Start a throwaway Neo4j (unless NEO4J_URI points at one), run lint and the whole
# suite against it, and stop it whatever the outcome.
# The end-to-end tests (tests/e2e) run in the same pytest, their set-up first;
# E2E_REQUIRED=1 turns a missing set-up into a failure instead of a skip.
test: venv
	@$(PYTHON) scripts/neo4j_server.py start
	@set -a; . ./.cache/neo4j/env; set +a; \
	  $(MAKE) --no-print-directory lint && $(MAKE) --no-print-directory e2e-setup && \
	  E2E_REQUIRED=1 $(BIN)/pytest; status=$$?; \
	  $(PYTHON) scripts/neo4j_server.py stop; exit $$status

# The dependency floors: a venv (.cache/lowest) holding the lowest version pyproject.toml
# allows of each direct dependency (uv's lowest-direct resolution; uv comes from PyPI),
# and the suite but for e2e, bench and fault against Neo4j started as `make test` starts
# it. The dev extra's schemathesis lifts rich to 13.9.4. Not part of `make test`.
UV := .cache/uv/bin/uv
LOWEST := .cache/lowest
LOWEST_TESTS := tests/unit tests/api tests/security tests/embeddings tests/ingest \
  tests/packaging tests/integration

test-lowest:
	@test -x $(UV) || { $(PYTHON) -m venv .cache/uv && .cache/uv/bin/pip install --quiet uv; }
	rm -rf $(LOWEST)
	$(UV) venv --quiet --seed --python $(PYTHON) $(LOWEST)
	$(UV) pip install --quiet --python $(LOWEST) --resolution lowest-direct -e '.[neo4j,dev]'
	@$(PYTHON) scripts/neo4j_server.py start
	@set -a; . ./.cache/neo4j/env; set +a; \
	  $(LOWEST)/bin/python -m pytest $(LOWEST_TESTS); status=$$?; \
	  $(PYTHON) scripts/neo4j_server.py stop; exit $$status

# The retrieval-quality bench (docs/quality.md) on a Neo4j instance of its own, started
# and stopped here. Its MiniLM provider needs the `local` extra (torch): BENCH_PYTHON may
# name the python of a venv that has it. QUALITY_ARGS passes options (--tiny, --providers).
BENCH_PYTHON ?= $(BIN)/python
QUALITY_NEO4J := $(PYTHON) scripts/neo4j_server.py --name quality

bench-quality: venv
	@$(QUALITY_NEO4J) start
	@set -a; . ./.cache/neo4j/quality/env; set +a; \
	  $(BENCH_PYTHON) -m bench.quality $(QUALITY_ARGS); status=$$?; \
	  $(QUALITY_NEO4J) stop; exit $$status

# GraphiQL's browser files (pinned npm packages) for `serve`, installed once per lock
# change; without npm, GraphiQL's page says how to get them (or use the CDN setting).
# `npm ci`'s options (no install scripts, quiet) are in $(GRAPHIQL)/.npmrc, which the
# build hook's `npm ci` reads too.
GRAPHIQL := src/redstring/api/graphiql
GRAPHIQL_STAMP := $(GRAPHIQL)/node_modules/.installed

graphiql: $(GRAPHIQL_STAMP)

$(GRAPHIQL_STAMP): $(GRAPHIQL)/package-lock.json
	@if command -v npm >/dev/null; then \
	  (cd $(GRAPHIQL) && npm ci) && touch $@; \
	else \
	  echo "npm not found: GraphiQL's files are not installed (or set REDSTRING_GRAPHIQL_ASSETS=cdn)"; \
	fi

# A real Apollo gateway over redstring and a second subgraph, and GraphiQL in
# Debian's headless Chromium; scripts/e2e_setup.sh installs Chromium and e2e/'s packages.
e2e-setup: venv graphiql
	@bash scripts/e2e_setup.sh

e2e: e2e-setup
	E2E_REQUIRED=1 $(BIN)/pytest tests/e2e

neo4j-start:
	$(PYTHON) scripts/neo4j_server.py start

neo4j-stop:
	$(PYTHON) scripts/neo4j_server.py stop

serve: venv graphiql
	$(BIN)/redstring serve --demo

# The dev Neo4j: its own instance (.cache/neo4j/dev/), persistent, so its data, port and
# password survive `neo4j-dev-stop`, crashes and reboots; the test server stays throwaway.
# `serve --demo` upserts the demo on every start, which changes nothing the second time.
DEV_NEO4J := $(PYTHON) scripts/neo4j_server.py --name dev

serve-neo4j: venv graphiql
	@$(DEV_NEO4J) start --persistent
	@set -a; . ./.cache/neo4j/dev/env; set +a; $(BIN)/redstring serve --demo

neo4j-dev-stop:
	$(DEV_NEO4J) stop --keep

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache e2e/node_modules $(GRAPHIQL)/node_modules
