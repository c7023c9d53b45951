"""When the server answering started (`StartReads.last_started`), read on a real Neo4j."""

from __future__ import annotations

import neo4j

from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore
from redstring.ports.restarts import StartReads


async def test_both_stores_read_the_start_of_the_server_they_share(
    driver: neo4j.AsyncDriver, neo4j_auth: tuple[str, tuple[str, str]]
) -> None:
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, 16, database="neo4j")
    assert isinstance(graph, StartReads)
    assert isinstance(vectors, StartReads)
    # One driver, one source: a readiness check reads the start once for both.
    assert graph.start_source == vectors.start_source
    start = await graph.last_started()
    assert start is not None
    uri, _ = neo4j_auth
    assert uri.endswith(start.server)  # the address the driver reached
    assert int(start.started) > 0  # ms since the epoch
    # The same while the server runs, whichever store asks.
    assert await vectors.last_started() == start
    assert await graph.last_started() == start


async def test_stores_on_two_drivers_are_two_sources(
    driver: neo4j.AsyncDriver, neo4j_auth: tuple[str, tuple[str, str]]
) -> None:
    uri, auth = neo4j_auth
    other = neo4j.AsyncGraphDatabase.driver(uri, auth=auth)
    try:
        assert Neo4jGraphStore(driver).start_source != Neo4jVectorStore(other, 16).start_source
    finally:
        await other.close()
