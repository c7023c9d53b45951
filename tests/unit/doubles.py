"""Store and provider doubles for retrieval tests."""

from __future__ import annotations

from collections.abc import Sequence

from redstring import (
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    TenantId,
    VectorMatch,
    VectorRecord,
)
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.vectors import has_direction


class RebuildingGraphStore(InMemoryGraphStore):
    """Hands out a fresh, equal copy of every entity on each read, as a remote store does."""

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        return [Entity(**e.model_dump()) for e in await super().get_entities(ids, tenant_id)]

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
        found = await super().find_lexical_candidates(
            keys,
            tenant_id,
            prefixes=prefixes,
            limit_per_key=limit_per_key,
            limit_per_prefix=limit_per_prefix,
            entity_types=entity_types,
        )
        return [Entity(**e.model_dump()) for e in reversed(found)]  # type: ignore[attr-defined]


class CountingEmbeddings(HashingEmbeddingProvider):
    """Counts query and document embedding calls, and keeps the texts of both."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension)
        self.queries = 0
        self.documents = 0
        self.query_texts: list[str] = []
        self.document_texts: list[str] = []

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        self.queries += 1
        self.query_texts += texts
        return await super().embed_query(texts)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents += 1
        self.document_texts += texts
        return await super().embed_documents(texts)


class DirectionlessFor(HashingEmbeddingProvider):
    """The hashing provider, except that each text holding one of `markers` embeds to
    zeros, as text without features does with any provider."""

    fill = 0.0

    def __init__(self, dimension: int, *markers: str) -> None:
        super().__init__(dimension)
        self.markers = markers

    def _zeroed(self, texts: Sequence[str], vectors: list[list[float]]) -> list[list[float]]:
        return [
            [self.fill] * self.dimension if any(m in t for m in self.markers) else v
            for t, v in zip(texts, vectors, strict=True)
        ]

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._zeroed(texts, await super().embed_query(texts))

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._zeroed(texts, await super().embed_documents(texts))


class OverflowingFor(DirectionlessFor):
    """As `DirectionlessFor`, but `1e39` in every component: finite as a Python float,
    infinite once stored as float32."""

    fill = 1e39


class RefusingDirectionlessVectors(InMemoryVectorStore):
    """An in-memory vector store that fails on a directionless vector, stored or searched
    with, as `vector.similarity.cosine` does on Neo4j: it shows whether one is sent."""

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if not all(has_direction(r.vector) for r in records):
            raise ValueError("a directionless vector was upserted")
        await super().upsert(records)

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        if not has_direction(vector):
            raise ValueError("a directionless vector was searched with")
        return await super().search(vector, tenant_id, k=k, entity_types=entity_types)


class CountingDeletes(InMemoryVectorStore):
    """An in-memory vector store that keeps the tenant and ids of each `delete` call."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.deleted: list[tuple[TenantId, list[EntityId]]] = []

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        self.deleted.append((tenant_id, list(entity_ids)))
        await super().delete(entity_ids, tenant_id)
