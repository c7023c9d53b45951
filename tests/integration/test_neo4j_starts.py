"""When the database last started (`StartReads.last_started`), read on a real Neo4j."""

from __future__ import annotations

import neo4j

from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore
from redstring.ports.restarts import StartReads


async def test_both_stores_read_one_start_by_the_database_name_or_as_home(
    driver: neo4j.AsyncDriver,
) -> None:
    """Without a database name the driver uses the user's home database, which the
    server of the tests names `neo4j`: both reads name the same start, again and again
    while the server runs."""
    home = Neo4jGraphStore(driver)
    named = Neo4jVectorStore(driver, 16, database="neo4j")
    assert isinstance(home, StartReads)
    assert isinstance(named, StartReads)
    started = await home.last_started()
    assert "@" in started  # a server and its time
    assert await named.last_started() == started
    assert await home.last_started() == started
