"""Retrieval embeds with `embed_query`, ingestion with `embed_documents`, never the other."""

from __future__ import annotations

from collections.abc import Sequence

from redstring import (
    EntityId,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorMatch,
    VectorRecord,
    build_graph,
)
from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.testing import make_entity, new_tenant

from .doubles import DOCUMENT_AXIS, QUERY_AXIS, TwoSidedEmbeddings


class RecordingVectorStore(InMemoryVectorStore):
    """Records the vectors written to it and the vectors it is searched with."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.written: dict[EntityId, list[float]] = {}
        self.searched: list[list[float]] = []

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        self.written.update({r.entity_id: list(r.vector) for r in records})
        await super().upsert(records)

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        self.searched.append(list(vector))
        return await super().search(vector, tenant_id, k=k, entity_types=entity_types)


async def _scene(
    embeddings: TwoSidedEmbeddings, cache: CachedQueryEmbeddings | None = None
) -> tuple[Retriever, RecordingVectorStore, TenantId, list[EntityId]]:
    """Two entities written with `embeddings`, and a retriever over them that embeds its
    queries with `embeddings`, or through `cache` when given."""
    tenant = new_tenant()
    entities = [make_entity(tenant, name) for name in ("Acme Corp", "Globex Inc")]
    vectors, graph = RecordingVectorStore(4), InMemoryGraphStore()
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    query_embeddings = embeddings if cache is None else cache
    retriever = Retriever(embeddings=query_embeddings, vectors=vectors, graph=graph)
    return retriever, vectors, tenant, [e.id for e in entities]


def _axis(axis: int) -> list[float]:
    return [1.0 if i == axis else 0.0 for i in range(4)]


async def test_ingestion_embeds_documents_and_retrieval_embeds_the_query() -> None:
    embeddings = TwoSidedEmbeddings()
    retriever, vectors, tenant, ids = await _scene(embeddings)

    assert embeddings.query_calls == []
    assert len(embeddings.document_calls) == 1
    for entity_id in ids:
        assert vectors.written[entity_id] == _axis(DOCUMENT_AXIS)

    await retriever.retrieve("acme", tenant, k=2, mode=RetrievalMode.SEMANTIC)

    assert embeddings.query_calls == [["acme"]]
    assert len(embeddings.document_calls) == 1
    assert vectors.searched == [_axis(QUERY_AXIS)]


async def test_the_lexical_mode_embeds_nothing() -> None:
    embeddings = TwoSidedEmbeddings()
    retriever, _, tenant, _ = await _scene(embeddings)
    await retriever.retrieve("acme", tenant, k=2, mode=RetrievalMode.LEXICAL)
    assert embeddings.query_calls == []


async def test_the_query_cache_keeps_the_two_sides_apart() -> None:
    inner = TwoSidedEmbeddings()
    cached = CachedQueryEmbeddings(inner)
    retriever, vectors, tenant, ids = await _scene(inner, cached)

    for _ in range(3):
        await retriever.retrieve("acme", tenant, k=2, mode=RetrievalMode.SEMANTIC)

    assert inner.query_calls == [["acme"]]
    assert len(inner.document_calls) == 1
    assert vectors.searched == [_axis(QUERY_AXIS)] * 3
    assert vectors.written[ids[0]] == _axis(DOCUMENT_AXIS)
    assert (cached.hits, cached.misses) == (2, 1)
