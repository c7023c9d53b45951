"""`Services`: one embedding provider, vector store and graph store, and the retriever over them."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from redstring.composition.observed import (
    ObservedEmbeddings,
    ObservedGraphStore,
    ObservedVectorStore,
)
from redstring.composition.observer import Observer
from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.composition.retrieval import Retriever
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.retrieval import RetrievalMode
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

    def observed(self, observer: Observer) -> Services:
        """These services with every store call, provider call, cache use and dangling
        match reported to `observer`: the same stores, provider and closers underneath.

        The query cache is rebuilt (empty, same size) over the observed provider, so
        that embedding times are those of the provider alone, not of cache hits.
        Observe a `Services` once; observing the result again reports each call twice.
        """
        embeddings = ObservedEmbeddings(self.embeddings, observer)
        vectors = ObservedVectorStore(self.vectors, observer)
        graph = ObservedGraphStore(self.graph, observer)
        cache = (
            None
            if self.query_cache is None
            else CachedQueryEmbeddings(
                embeddings, max_size=self.query_cache.max_size, observer=observer
            )
        )
        retriever = self.retriever.with_parts(
            embeddings=embeddings if cache is None else cache,
            vectors=vectors,
            graph=graph,
            observer=observer,
        )
        return replace(
            self,
            embeddings=embeddings,
            vectors=vectors,
            graph=graph,
            retriever=retriever,
            query_cache=cache,
        )

    async def check_ready(self) -> None:
        """Raise when a store does not answer a cheap read (a random, empty tenant)."""
        tenant = TenantId(uuid.uuid4())
        await self.graph.get_entities([EntityId(uuid.uuid4())], tenant)
        await self.vectors.search(self._probe_vector(), tenant, k=1)

    async def warm_up(self) -> None:
        """Run the readiness check and each read a retrieve or a traversal makes, once, in
        a random empty tenant, without embedding anything.

        Neo4j plans a Cypher statement the first time it runs it, about a second for a
        vector search on a server just started; warmed up, neither the first readiness
        check (whose deadline is short) nor the first request pays for it.
        """
        tenant = TenantId(uuid.uuid4())
        await self.check_ready()
        await self.vectors.search(self._probe_vector(), tenant, k=1, entity_types=["warm-up"])
        await self.retriever.retrieve("warm up", tenant, k=1, mode=RetrievalMode.LEXICAL)
        await self.graph.relationships_of([EntityId(uuid.uuid4())], tenant, limit_per_entity=1)

    def _probe_vector(self) -> list[float]:
        return [1.0] + [0.0] * (self.vectors.dimension - 1)

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
