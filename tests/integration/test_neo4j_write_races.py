"""Entity writes over a real Neo4j whose vector write lands late or never: what the two
stores hold afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import neo4j
import pytest

from redstring import (
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    Redstring,
    RetrievalMode,
    StoreUnavailableError,
    TenantId,
    VectorMatch,
    VectorRecord,
    VectorStore,
    build_graph,
)
from redstring.testing import new_tenant
from tests.integration.test_neo4j_races import under_held

DIMENSION = 384  # the dimension of the shared database's vector index


class _HeldVectors:
    """`inner`, but for `upsert`, which sets `reached`, waits for `gate`, then raises
    when `failing`."""

    def __init__(self, inner: VectorStore, *, failing: bool = False) -> None:
        self.inner, self.failing = inner, failing
        self.reached, self.gate = asyncio.Event(), asyncio.Event()

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        self.reached.set()
        await self.gate.wait()
        if self.failing:
            raise StoreUnavailableError("the vector store went away")
        await self.inner.upsert(records)

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        return await self.inner.search(vector, tenant_id, k=k, entity_types=entity_types)

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]:
        return await self.inner.sources(entity_ids, tenant_id)

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        await self.inner.delete(entity_ids, tenant_id)


async def test_a_delete_between_an_upsert_s_two_writes_leaves_no_vector(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    uri, auth = neo4j_auth
    tenant = new_tenant()
    entity = Entity.create(tenant, "Gamma Widgets", "org")
    embeddings = HashingEmbeddingProvider(DIMENSION)
    async with Redstring.neo4j(uri, auth, embeddings=embeddings) as client:
        held = _HeldVectors(client.vectors)
        upsert = asyncio.ensure_future(
            build_graph([entity], embeddings=embeddings, vectors=held, graph=client.graph)
        )
        await asyncio.wait_for(held.reached.wait(), timeout=10)  # the entity is written
        assert await client.graph.get_entities([entity.id], tenant) == [entity]
        assert await client.delete([entity.id], tenant) == 1
        held.gate.set()
        await asyncio.wait_for(upsert, timeout=10)
        assert await client.vectors.sources([entity.id], tenant) == {}


async def test_a_vector_written_inside_a_delete_is_deleted_by_it(
    neo4j_auth: tuple[str, tuple[str, str]], driver: neo4j.AsyncDriver
) -> None:
    """The delete has removed the vectors and waits for the entity's lock, which another
    session's transaction holds; meanwhile the upsert's vector write lands and its
    read-back still finds the entity. Once the lock is let go, the delete removes the
    entity, then the vectors again."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    entity = Entity.create(tenant, "Gamma Widgets", "org")
    embeddings = HashingEmbeddingProvider(DIMENSION)
    async with Redstring.neo4j(uri, auth, embeddings=embeddings) as client:
        held = _HeldVectors(client.vectors)
        upsert = asyncio.ensure_future(
            build_graph([entity], embeddings=embeddings, vectors=held, graph=client.graph)
        )
        await asyncio.wait_for(held.reached.wait(), timeout=10)  # the entity is written

        async def written_and_read_back() -> None:
            held.gate.set()
            await asyncio.wait_for(upsert, timeout=10)
            assert list(await client.vectors.sources([entity.id], tenant)) == [entity.id]

        delete = await under_held(
            driver,
            "MATCH (e:Entity {tenant_id: $tenant_id, id: $id}) SET e.name = e.name",
            {"tenant_id": str(tenant), "id": str(entity.id)},
            lambda: client.delete([entity.id], tenant),
            meanwhile=written_and_read_back,
        )
        assert await asyncio.wait_for(delete, timeout=10) == 1
        assert await client.vectors.sources([entity.id], tenant) == {}


async def test_a_rename_whose_vector_write_fails_leaves_no_vector_of_the_old_text(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """The old text's vector would keep the old type in the index's filter: a semantic
    search for the old name among `org`s would find the renamed person."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "org")
    renamed = Entity(id=acme.id, tenant_id=tenant, name="Zephyr Holdings", entity_type="person")
    embeddings = HashingEmbeddingProvider(DIMENSION)
    async with Redstring.neo4j(uri, auth, embeddings=embeddings) as client:
        await client.upsert([acme])
        failing = _HeldVectors(client.vectors, failing=True)
        failing.gate.set()
        with pytest.raises(StoreUnavailableError):
            await build_graph([renamed], embeddings=embeddings, vectors=failing, graph=client.graph)
        assert await client.graph.get_entities([acme.id], tenant) == [renamed]
        assert await client.vectors.sources([acme.id], tenant) == {}
        found = await client.retrieve(
            "Acme Corp", tenant, k=3, entity_types=["org"], mode=RetrievalMode.SEMANTIC
        )
        assert found.matches == ()
