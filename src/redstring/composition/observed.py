"""Ports wrapped so that each call is timed and reported to an `Observer`.

`Redstring.observed` puts these around its stores and provider; they forward
every call unchanged, and add one clock read before and after it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType

from redstring.composition.entity_vectors import provider_identity
from redstring.composition.observer import Observer
from redstring.domain.candidates import Candidates
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.neighbourhood import Neighbourhood
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.relationship_order import RelationshipPlace
from redstring.domain.vectors import StoredSource, VectorMatch, VectorRecord
from redstring.ports.candidate_reader import CandidateReader
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import EndReads, GraphStore, embedding_texts_of
from redstring.ports.vector_store import SourceSamples, VectorStore


class _StoreCall:
    """Times one store call and reports it on the way out, failed or not."""

    __slots__ = ("_method", "_observer", "_started", "_store")

    def __init__(self, observer: Observer, store: str, method: str) -> None:
        self._observer = observer
        self._store = store
        self._method = method
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        seconds = time.perf_counter() - self._started
        self._observer.store_call(self._store, self._method, seconds, failed=exc is not None)


class ObservedGraphStore:
    """A `GraphStore` reporting each call to `observer` as store `graph`."""

    def __init__(self, inner: GraphStore, observer: Observer) -> None:
        self.inner = inner
        self._observer = observer

    def _call(self, method: str) -> _StoreCall:
        return _StoreCall(self._observer, "graph", method)

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        with self._call("get_entities"):
            return await self.inner.get_entities(ids, tenant_id)

    async def embedding_texts(
        self, ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str]:
        """A `TextReads` over any store: the inner store's own read where it offers one,
        else its entities read whole (`embedding_texts_of`), reported under this name."""
        with self._call("embedding_texts"):
            return await embedding_texts_of(self.inner, ids, tenant_id)

    async def find_lexical_candidates(
        self,
        keys: Sequence[str],
        tenant_id: TenantId,
        *,
        prefixes: Sequence[str] = (),
        limit_per_key: int | None = None,
        limit_per_prefix: int | None = None,
        entity_types: Sequence[str] | None = None,
    ) -> list[LexicalCandidate]:
        with self._call("find_lexical_candidates"):
            return await self.inner.find_lexical_candidates(
                keys,
                tenant_id,
                prefixes=prefixes,
                limit_per_key=limit_per_key,
                limit_per_prefix=limit_per_prefix,
                entity_types=entity_types,
            )

    async def relationships_of(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
        limit_per_entity: int | None = None,
        after: RelationshipPlace | Relationship | None = None,
    ) -> dict[EntityId, list[Relationship]]:
        with self._call("relationships_of"):
            return await self.inner.relationships_of(
                entity_ids,
                tenant_id,
                direction=direction,
                types=types,
                limit_per_entity=limit_per_entity,
                after=after,
            )

    async def relationship_counts(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
    ) -> dict[EntityId, int]:
        with self._call("relationship_counts"):
            return await self.inner.relationship_counts(
                entity_ids, tenant_id, direction=direction, types=types
            )

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        with self._call("upsert_entities"):
            await self.inner.upsert_entities(entities)

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        with self._call("upsert_relationships"):
            await self.inner.upsert_relationships(relationships)

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        with self._call("delete_entities"):
            return await self.inner.delete_entities(ids, tenant_id)

    async def tenants(self) -> list[TenantId]:
        with self._call("tenants"):
            return await self.inner.tenants()

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None = None, limit: int
    ) -> list[Entity]:
        with self._call("entity_page"):
            return await self.inner.entity_page(tenant_id, after=after, limit=limit)

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        with self._call("entity_types"):
            return await self.inner.entity_types(tenant_id, limit=limit, after=after)

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        with self._call("rewrite_keys"):
            return await self.inner.rewrite_keys(entities)


class ObservedGraphStoreWithEnds(ObservedGraphStore):
    """An `ObservedGraphStore` over a store that reads relationships with their ends."""

    def __init__(self, inner: GraphStore, observer: Observer) -> None:
        if not isinstance(inner, EndReads):
            raise TypeError(f"{type(inner).__name__} does not read relationships' ends")
        super().__init__(inner, observer)
        self._ends = inner

    async def relationships_with_ends(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
        limit_per_entity: int | None = None,
        after: RelationshipPlace | Relationship | None = None,
    ) -> Neighbourhood:
        with self._call("relationships_with_ends"):
            return await self._ends.relationships_with_ends(
                entity_ids,
                tenant_id,
                direction=direction,
                types=types,
                limit_per_entity=limit_per_entity,
                after=after,
            )


def observed_graph_store(inner: GraphStore, observer: Observer) -> ObservedGraphStore:
    """`inner` reporting each call to `observer`: an `EndReads` exactly when `inner` is
    one, so that whoever reads through it takes the same path as over `inner`."""
    if isinstance(inner, EndReads):
        return ObservedGraphStoreWithEnds(inner, observer)
    return ObservedGraphStore(inner, observer)


class ObservedVectorStore:
    """A `VectorStore` reporting each call to `observer` as store `vector`."""

    def __init__(self, inner: VectorStore, observer: Observer) -> None:
        self.inner = inner
        self._observer = observer

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def _call(self, method: str) -> _StoreCall:
        return _StoreCall(self._observer, "vector", method)

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        with self._call("upsert"):
            await self.inner.upsert(records)

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        with self._call("search"):
            return await self.inner.search(vector, tenant_id, k=k, entity_types=entity_types)

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]:
        with self._call("sources"):
            return await self.inner.sources(entity_ids, tenant_id)

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        with self._call("delete"):
            await self.inner.delete(entity_ids, tenant_id)


class ObservedVectorStoreWithSamples(ObservedVectorStore):
    """An `ObservedVectorStore` over a store that reads samples of its sources."""

    def __init__(self, inner: VectorStore, observer: Observer) -> None:
        if not isinstance(inner, SourceSamples):
            raise TypeError(f"{type(inner).__name__} reads no sample of its sources")
        super().__init__(inner, observer)
        self._samples = inner

    async def sample_sources(self, limit: int) -> list[StoredSource]:
        with self._call("sample_sources"):
            return await self._samples.sample_sources(limit)


def observed_vector_store(inner: VectorStore, observer: Observer) -> ObservedVectorStore:
    """`inner` reporting each call to `observer`: a `SourceSamples` exactly when `inner`
    is one, so that whoever checks for it finds what `inner` offers."""
    if isinstance(inner, SourceSamples):
        return ObservedVectorStoreWithSamples(inner, observer)
    return ObservedVectorStore(inner, observer)


class ObservedCandidateReader:
    """A `CandidateReader` reporting each call to `observer` as store `candidates`."""

    def __init__(self, inner: CandidateReader, observer: Observer) -> None:
        self.inner = inner
        self._observer = observer

    async def find_candidates(
        self,
        tenant_id: TenantId,
        *,
        vector: Sequence[float] | None,
        k: int,
        keys: Sequence[str],
        prefixes: Sequence[str] = (),
        limit_per_key: int | None = None,
        limit_per_prefix: int | None = None,
        entity_types: Sequence[str] | None = None,
    ) -> Candidates:
        with _StoreCall(self._observer, "candidates", "find_candidates"):
            return await self.inner.find_candidates(
                tenant_id,
                vector=vector,
                k=k,
                keys=keys,
                prefixes=prefixes,
                limit_per_key=limit_per_key,
                limit_per_prefix=limit_per_prefix,
                entity_types=entity_types,
            )


class ObservedEmbeddings:
    """An `EmbeddingProvider` reporting each call's duration, size and what it raised to
    `observer`."""

    def __init__(self, inner: EmbeddingProvider, observer: Observer) -> None:
        self.inner = inner
        self._observer = observer

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def identity(self) -> str:
        return provider_identity(self.inner)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._timed("documents", texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._timed("query", texts)

    async def _timed(self, kind: str, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        embed = self.inner.embed_query if kind == "query" else self.inner.embed_documents
        try:
            vectors = await embed(texts)
        except BaseException as exc:  # a cancellation too, which the observer tells apart
            seconds = time.perf_counter() - started
            self._observer.embedding(kind, len(texts), seconds, error=exc)
            raise
        seconds = time.perf_counter() - started
        self._observer.embedding(kind, len(texts), seconds, error=None)
        return vectors
