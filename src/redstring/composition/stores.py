"""Opening the store backends as `Services`: in memory, or on a Neo4j server."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from redstring.adapters.memory import InMemoryGraphStore, InMemoryVectorStore
from redstring.composition.services import Closer, Services
from redstring.ports.embedding_provider import EmbeddingProvider


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


def embedding_closers(embeddings: EmbeddingProvider) -> tuple[Closer, ...]:
    """The provider's `aclose` when it has one (an HTTP client to release), else nothing."""
    return (embeddings.aclose,) if isinstance(embeddings, _Closable) else ()


def open_memory_services(
    embeddings: EmbeddingProvider, *, query_cache_size: int = 0, owns_embeddings: bool = False
) -> Services:
    """Empty in-memory stores sized for `embeddings`; they live as long as the process.

    With `owns_embeddings`, `aclose()` on the result closes the provider too.
    `query_cache_size` is passed to `Services.over`.
    """
    return Services.over(
        embeddings=embeddings,
        vectors=InMemoryVectorStore(embeddings.dimension),
        graph=InMemoryGraphStore(),
        closers=embedding_closers(embeddings) if owns_embeddings else (),
        query_cache_size=query_cache_size,
    )


async def open_neo4j_services(
    embeddings: EmbeddingProvider,
    *,
    uri: str,
    user: str,
    password: str,
    database: str | None = None,
    query_cache_size: int = 0,
    owns_embeddings: bool = False,
) -> Services:
    """Both Neo4j stores over one owned driver (one connection pool), schema ensured
    and every read statement run once (`Services.warm_up`).

    The adapters are imported here, not at module level, so that redstring
    runs without the `neo4j` extra until this backend is chosen. `aclose()`
    on the result closes the driver, then the provider when
    `owns_embeddings`; an owned provider is also closed when opening fails.
    """
    closers = embedding_closers(embeddings) if owns_embeddings else ()
    try:
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
    except BaseException:
        for close in closers:
            await close()
        raise
    services = Services.over(
        embeddings=embeddings,
        vectors=vectors,
        graph=graph,
        closers=(driver.close, *closers),
        query_cache_size=query_cache_size,
    )
    try:
        await services.warm_up()
    except BaseException:
        await services.aclose()
        raise
    return services
