"""A real Neo4j over Bolt, from the environment `make test` sets (`.cache/neo4j/env`).

Without NEO4J_URI these tests fail rather than skip: the suite is only
complete with them. Run `make test` (or `make neo4j-start` and source the
env file) to provide one.

The suite leaves the server as it found it but for the shared schema (the graph
store's, and the default vector label's at the default dimension): the tenants a
test makes with `new_tenant` are deleted from the graph and the default vector
label after it; the vector labels named by `run_label` carry this run's suffix and
are dropped, nodes, constraint and index, at the end of the session, which then
checks that no node of any tenant the session made is left. A test that makes a
label of its own drops it itself.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import neo4j
import pytest

from redstring.adapters.neo4j import connect_driver, cypher
from redstring.domain.ids import TenantId
from redstring.testing import tenants_made

RUN = uuid.uuid4().hex[:8]
DEFAULT_LABEL = "EntityVector"
_RUN_LABELS: set[str] = set()


def run_label(stem: str) -> str:
    """A vector label of this run alone (`stem` and the run's suffix): no other run on the
    server writes it, so it is dropped with its nodes, constraint and index at the end."""
    label = f"{stem}_{RUN}"
    _RUN_LABELS.add(label)
    return label


COMPLIANCE_LABEL = run_label("ComplianceVector16")
COMPLIANCE_DIMENSION = 16


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


@pytest.fixture(scope="session")
def _cleaner(neo4j_auth: tuple[str, tuple[str, str]]) -> Iterator[_Cleaner]:
    """The session's cleaner, on a driver of its own (synchronous, so that it needs no
    event loop): at the end it drops the run's labels and checks that no node of any
    tenant the session made is left, whatever its label."""
    uri, auth = neo4j_auth
    with neo4j.GraphDatabase.driver(uri, auth=auth) as made:
        cleaner = _Cleaner(made)
        yield cleaner
        cleaner.drop_run_labels()
        cleaner.assert_nothing_left()


@pytest.fixture(autouse=True)
def _tenants_deleted(_cleaner: _Cleaner) -> Iterator[None]:
    """The nodes of every tenant the test made (with their edges) are deleted after it."""
    with tenants_made() as tenants:
        yield
    _cleaner.delete_tenants(tenants)


class _Cleaner:
    def __init__(self, driver: neo4j.Driver) -> None:
        self._driver = driver
        self._tenants: list[str] = []

    def _run(self, statement: str, **parameters: object) -> list[neo4j.Record]:
        with self._driver.session() as session:
            return list(session.run(statement, parameters))

    def delete_tenants(self, tenants: list[TenantId]) -> None:
        """The nodes of `tenants` in the shared labels, each found through its identity
        constraint's index (`tenant_id` first, the id only required to exist). The run's
        own labels wait for `drop_run_labels`, which is quicker without their indexes."""
        if not tenants:
            return
        named = [str(tenant) for tenant in tenants]
        self._tenants += named
        for label, key in (("Entity", "id"), (DEFAULT_LABEL, "entity_id")):
            self._run(
                f"MATCH (n:{label}) WHERE n.tenant_id IN $tenants AND n.{key} IS NOT NULL "
                "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS",
                tenants=named,
            )

    def drop_run_labels(self) -> None:
        """Each of the run's labels: its index first, so the nodes go without updating it."""
        for label in sorted(_RUN_LABELS):
            self._run(f"DROP INDEX {cypher.vector_index_name(label)} IF EXISTS")
            self._run(
                f"MATCH (v:{label}) CALL (v) {{ DETACH DELETE v }} IN TRANSACTIONS OF 10000 ROWS"
            )
            self._run(f"DROP CONSTRAINT {cypher.vector_constraint_name(label)} IF EXISTS")

    def assert_nothing_left(self) -> None:
        [left] = self._run(
            "MATCH (n) WHERE n.tenant_id IN $tenants RETURN count(n) AS n", tenants=self._tenants
        )
        assert left["n"] == 0
        prefixes = tuple(
            cypher.vector_index_name(label).removesuffix("_embedding") + "_"
            for label in _RUN_LABELS
        )
        names = [
            row["name"]
            for shown in ("INDEXES", "CONSTRAINTS")
            for row in self._run(f"SHOW {shown} YIELD name")
        ]
        assert not [name for name in names if name.startswith(prefixes)]
