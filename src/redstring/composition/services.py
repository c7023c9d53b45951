"""`Services`: one embedding provider, vector store and graph store, and the retriever over them."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.composition.retrieval import Retriever
from redstring.domain.ids import EntityId, TenantId
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphStore
from redstring.ports.vector_store import VectorStore

Closer = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Services:
    """What a server or a loader works with; built once, shared by every request.

    `embeddings` is the provider itself: ingestion calls its
    `embed_documents`. The retriever embeds queries through `query_cache`
    when there is one (so its hit rate can be read), else through the same
    provider. `closers` release what the services own (drivers, pools, HTTP
    clients), in order, when `aclose` is called; services built over
    injected stores own nothing.
    """

    embeddings: EmbeddingProvider
    vectors: VectorStore
    graph: GraphStore
    retriever: Retriever
    closers: tuple[Closer, ...] = field(default=())
    query_cache: CachedQueryEmbeddings | None = None

    @classmethod
    def over(
        cls,
        *,
        embeddings: EmbeddingProvider,
        vectors: VectorStore,
        graph: GraphStore,
        closers: Sequence[Closer] = (),
        query_cache_size: int = 0,
    ) -> Services:
        """Services over these stores, with a `Retriever` built from them.

        `query_cache_size > 0` puts a `CachedQueryEmbeddings` of that many
        queries between the retriever and the provider; 0 leaves it out.
        Raises `DimensionMismatchError` when the provider and the vector store disagree.
        """
        if query_cache_size < 0:
            raise ValueError("query_cache_size must not be negative")
        cache = (
            CachedQueryEmbeddings(embeddings, max_size=query_cache_size)
            if query_cache_size
            else None
        )
        # Not `cache or embeddings`: an empty cache has len 0, so it is falsy.
        query_embeddings = embeddings if cache is None else cache
        retriever = Retriever(embeddings=query_embeddings, vectors=vectors, graph=graph)
        return cls(
            embeddings=embeddings,
            vectors=vectors,
            graph=graph,
            retriever=retriever,
            closers=tuple(closers),
            query_cache=cache,
        )

    async def check_ready(self) -> None:
        """Raise when a store does not answer a cheap read (a random, empty tenant)."""
        tenant = TenantId(uuid.uuid4())
        await self.graph.get_entities([EntityId(uuid.uuid4())], tenant)
        probe = [1.0] + [0.0] * (self.vectors.dimension - 1)
        await self.vectors.search(probe, tenant, k=1)

    async def aclose(self) -> None:
        """Run every closer, even when an earlier one fails; the first failure is raised."""
        failure: BaseException | None = None
        for close in self.closers:
            try:
                await close()
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
