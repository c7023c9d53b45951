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
	$(BIN)/python -m pip install --quiet -e '.[dev,neo4j]'
	touch $(STAMP)

lint: venv
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: venv
	$(BIN)/pytest -m "not neo4j"

test: lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache
