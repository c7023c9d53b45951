"""Opening the store backends as `Services`: in memory, or on a Neo4j server."""

from __future__ import annotations

from redstring.adapters.memory import InMemoryGraphStore, InMemoryVectorStore
from redstring.composition.services import Services
from redstring.ports.embedding_provider import EmbeddingProvider


def open_memory_services(embeddings: EmbeddingProvider) -> Services:
    """Empty in-memory stores sized for `embeddings`; they live as long as the process."""
    return Services.over(
        embeddings=embeddings,
        vectors=InMemoryVectorStore(embeddings.dimension),
        graph=InMemoryGraphStore(),
    )


async def open_neo4j_services(
    embeddings: EmbeddingProvider,
    *,
    uri: str,
    user: str,
    password: str,
    database: str | None = None,
) -> Services:
    """Both Neo4j stores over one owned driver (one connection pool), schema ensured.

    The adapters are imported here, not at module level, so that redstring
    runs without the `neo4j` extra until this backend is chosen. `aclose()`
    on the result closes the driver.
    """
    from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver

    driver = connect_driver(uri, (user, password))
    try:
        graph = Neo4jGraphStore(driver, database=database)
        vectors = Neo4jVectorStore(driver, embeddings.dimension, database=database)
        await graph.ensure_schema()
        await vectors.ensure_schema()
    except BaseException:
        await driver.close()
        raise
    return Services.over(
        embeddings=embeddings, vectors=vectors, graph=graph, closers=(driver.close,)
    )
