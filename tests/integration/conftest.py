"""A real Neo4j over Bolt, from the environment `make test` sets (`.cache/neo4j/env`).

Without NEO4J_URI these tests fail rather than skip: the suite is only
complete with them. Run `make test` (or `make neo4j-start` and source the
env file) to provide one.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import neo4j
import pytest

from redstring.adapters.neo4j import connect_driver


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.path):
            item.add_marker(pytest.mark.neo4j)


@pytest.fixture(scope="session")
def neo4j_auth() -> tuple[str, tuple[str, str]]:
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        pytest.fail("NEO4J_URI is not set: run `make test`, which starts a throwaway Neo4j")
    return uri, (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])


@pytest.fixture
async def driver(neo4j_auth: tuple[str, tuple[str, str]]) -> AsyncIterator[neo4j.AsyncDriver]:
    uri, auth = neo4j_auth
    async with connect_driver(uri, auth) as made:
        yield made


COMPLIANCE_LABEL = "ComplianceVector16"
COMPLIANCE_DIMENSION = 16
