"""Store doubles for tests of code that uses the ports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.neighbourhood import Neighbourhood
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.relationship_order import RelationshipPlace
from redstring.ports.graph_store import EndReads, GraphStore, embedding_texts_of


class CountingGraphStore:
    """Forwards to `inner` and counts calls per method name; never an `EndReads`
    (`counting_graph_store` gives one when `inner` is)."""

    def __init__(self, inner: GraphStore) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        self.calls["get_entities"] += 1
        return await self.inner.get_entities(ids, tenant_id)

    async def embedding_texts(
        self, ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str]:
        """A `TextReads` over any store, as `ObservedGraphStore` is; counted under this
        name whether `inner` reads the texts or its entities whole."""
        self.calls["embedding_texts"] += 1
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
        self.calls["find_lexical_candidates"] += 1
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
        self.calls["relationships_of"] += 1
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
        self.calls["relationship_counts"] += 1
        return await self.inner.relationship_counts(
            entity_ids, tenant_id, direction=direction, types=types
        )

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        self.calls["upsert_entities"] += 1
        await self.inner.upsert_entities(entities)

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        self.calls["upsert_relationships"] += 1
        await self.inner.upsert_relationships(relationships)

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        self.calls["delete_entities"] += 1
        return await self.inner.delete_entities(ids, tenant_id)

    async def tenants(self) -> list[TenantId]:
        self.calls["tenants"] += 1
        return await self.inner.tenants()

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None = None, limit: int
    ) -> list[Entity]:
        self.calls["entity_page"] += 1
        return await self.inner.entity_page(tenant_id, after=after, limit=limit)

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        self.calls["entity_types"] += 1
        return await self.inner.entity_types(tenant_id, limit=limit, after=after)

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        self.calls["rewrite_keys"] += 1
        return await self.inner.rewrite_keys(entities)


class CountingGraphStoreWithEnds(CountingGraphStore):
    """A `CountingGraphStore` over a store that reads relationships with their ends."""

    def __init__(self, inner: GraphStore) -> None:
        if not isinstance(inner, EndReads):
            raise TypeError(f"{type(inner).__name__} does not read relationships' ends")
        super().__init__(inner)
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
        self.calls["relationships_with_ends"] += 1
        return await self._ends.relationships_with_ends(
            entity_ids,
            tenant_id,
            direction=direction,
            types=types,
            limit_per_entity=limit_per_entity,
            after=after,
        )


def counting_graph_store(inner: GraphStore) -> CountingGraphStore:
    """A `CountingGraphStore` over `inner`, an `EndReads` exactly when `inner` is one."""
    if isinstance(inner, EndReads):
        return CountingGraphStoreWithEnds(inner)
    return CountingGraphStore(inner)
