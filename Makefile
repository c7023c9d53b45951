# redstring: `make serve` and `make test` are the quick start; both create the venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv lint test unit serve neo4j-start neo4j-stop bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,neo4j-rust]'
	touch $(STAMP)

lint: venv
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: venv
	$(BIN)/pytest -m "not neo4j"

# Start a throwaway Neo4j (unless NEO4J_URI points at one), run lint and the whole
# suite against it, and stop it whatever the outcome.
test: venv
	@$(PYTHON) scripts/neo4j_server.py start
	@set -a; . ./.cache/neo4j/env; set +a; \
	  $(MAKE) --no-print-directory lint && $(BIN)/pytest; status=$$?; \
	  $(PYTHON) scripts/neo4j_server.py stop; exit $$status

neo4j-start:
	$(PYTHON) scripts/neo4j_server.py start

neo4j-stop:
	$(PYTHON) scripts/neo4j_server.py stop

serve: venv
	$(BIN)/redstring serve --demo

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache
