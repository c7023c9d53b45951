"""A graph store double that fails every call (the counting one is in redstring.testing)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from redstring import Direction, Entity, EntityId, Relationship, RelationshipPlace, TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.testing import CountingGraphStore

__all__ = ["CountingGraphStore", "FailingGraphStore"]


class FailingGraphStore:
    """Raises `make_error()` from every call, as a store that is down or broken would."""

    def __init__(self, make_error: Callable[[], Exception]) -> None:
        self.make_error = make_error

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        raise self.make_error()

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
        raise self.make_error()

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
        raise self.make_error()

    async def relationship_counts(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
    ) -> dict[EntityId, int]:
        raise self.make_error()

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        raise self.make_error()

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        raise self.make_error()

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        raise self.make_error()

    async def tenants(self) -> list[TenantId]:
        raise self.make_error()

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None = None, limit: int
    ) -> list[Entity]:
        raise self.make_error()

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        raise self.make_error()

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        raise self.make_error()
