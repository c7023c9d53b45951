"""The stores through a routing driver (`neo4j://`), reads in READ mode, and bookmarks.

A single server answers the routing scheme with a one-member routing table, so
these run on the suite's server; in a cluster the same driver sends READ
sessions to followers and read replicas.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from redstring import HashingEmbeddingProvider, Retriever, VectorRecord, build_graph
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver
from redstring.adapters.neo4j.connection import DEFAULT_SETTINGS, Neo4jConnection
from redstring.domain.errors import InvalidInputError
from redstring.ports.consistency import consistent_after
from redstring.testing import make_entity, new_tenant
from tests.integration.conftest import COMPLIANCE_DIMENSION, COMPLIANCE_LABEL


def routing_uri(uri: str) -> str:
    """The same server by the routing scheme."""
    return "neo4j://" + uri.split("://", 1)[1]


@pytest.fixture
async def routing_driver(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> AsyncIterator[neo4j.AsyncDriver]:
    uri, auth = neo4j_auth
    async with connect_driver(routing_uri(uri), auth) as made:
        yield made


async def test_the_stores_work_through_the_routing_scheme(
    routing_driver: neo4j.AsyncDriver,
) -> None:
    graph = Neo4jGraphStore(routing_driver)
    vectors = Neo4jVectorStore(routing_driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    tenant = new_tenant()
    entities = [make_entity(tenant, name) for name in ("Harrow Quay", "Lindqvist Marine")]
    embeddings = HashingEmbeddingProvider(COMPLIANCE_DIMENSION)
    await build_graph(entities, [], embeddings=embeddings, vectors=vectors, graph=graph)

    found = await graph.get_entities([e.id for e in entities], tenant)
    assert {e.name for e in found} == {"Harrow Quay", "Lindqvist Marine"}
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    matches = await retriever.retrieve("Harrow Quay", tenant, k=1)
    assert matches.matches[0].entity.name == "Harrow Quay"


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
async def test_reads_run_in_read_mode(neo4j_auth: tuple[str, tuple[str, str]], scheme: str) -> None:
    """The server refuses a write in a READ session: `query` could not write."""
    uri, auth = neo4j_auth
    async with connect_driver(f"{scheme}://{uri.split('://', 1)[1]}", auth) as driver:
        connection = Neo4jConnection(driver, database=None, settings=DEFAULT_SETTINGS, owned=False)
        with pytest.raises(neo4j_errors.ClientError) as refused:
            await connection.query("CREATE (n:RedstringReadModeProbe) RETURN n", {})
        assert "AccessMode" in (refused.value.code or ""), refused.value.code


async def test_a_write_reports_its_bookmarks_and_another_driver_reads_after_them(
    neo4j_auth: tuple[str, tuple[str, str]], routing_driver: neo4j.AsyncDriver
) -> None:
    """Two drivers stand for two API processes: the second reads after the bookmarks
    the first one's write left."""
    tenant = new_tenant()
    record = VectorRecord(
        entity_id=uuid.uuid4(),  # type: ignore[arg-type]
        tenant_id=tenant,
        vector=tuple([1.0] + [0.0] * (COMPLIANCE_DIMENSION - 1)),
        entity_type="thing",
    )
    writer = Neo4jVectorStore(routing_driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await writer.ensure_schema()
    with consistent_after() as unit:
        await writer.upsert([record])
    assert unit.written
    assert all(isinstance(p, str) and p for p in unit.written)

    uri, auth = neo4j_auth
    async with connect_driver(routing_uri(uri), auth) as other:
        reader = Neo4jVectorStore(other, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
        with consistent_after(unit.written):
            found = await reader.search(list(record.vector), tenant, k=1)
        assert [m.entity_id for m in found] == [record.entity_id]


async def test_a_bookmark_the_server_does_not_take_is_invalid_input(
    routing_driver: neo4j.AsyncDriver,
) -> None:
    graph = Neo4jGraphStore(routing_driver)
    refused = pytest.raises(
        InvalidInputError, match=r"^the bookmark is not one of this database's$"
    )
    with consistent_after(["not-a-bookmark"]), refused:
        await graph.get_entities([uuid.uuid4()], new_tenant())  # type: ignore[list-item]
