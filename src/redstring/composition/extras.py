"""The optional extras (`pip install 'redstring[EXTRA]'`): whether the library one brings
is installed, and the refusal of a choice that needs it when it is not."""

from __future__ import annotations

import importlib.util
import sys

from redstring.domain.errors import InvalidInputError

# What the `neo4j` extra installs, which the Neo4j adapters import.
NEO4J_LIBRARY = "neo4j"


def library_installed(name: str) -> bool:
    """Whether the top-level module `name` can be imported, without importing it (a
    second or two for some). A module blocked by a `None` in `sys.modules` is not."""
    if sys.modules.get(name) is not None:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except ValueError:  # a module put in `sys.modules` without a spec, then removed
        return True


def check_neo4j_extra() -> None:
    """`InvalidInputError` naming the `neo4j` extra when its driver is not installed."""
    if not library_installed(NEO4J_LIBRARY):
        raise InvalidInputError(
            "the neo4j backend needs the neo4j extra: pip install 'redstring[neo4j]'"
        )
