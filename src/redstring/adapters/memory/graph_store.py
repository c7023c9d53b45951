"""`InMemoryGraphStore`: dictionaries per tenant, with a blocking-key index."""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

from sortedcontainers import SortedDict, SortedList

from redstring.domain.arguments import items_of, names_of, optional_count_of, page_size_of
from redstring.domain.blocking import block_caps_of
from redstring.domain.entity import Entity
from redstring.domain.entity_types import type_after_of
from redstring.domain.errors import MissingEndpointError
from redstring.domain.ids import (
    EntityId,
    RelationshipId,
    TenantId,
    entity_id_of,
    entity_ids_of,
    id_order_key,
    tenant_id_of,
)
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.neighbourhood import Neighbourhood, far_end
from redstring.domain.relationship import Direction, Relationship, relationship_filters_of
from redstring.domain.relationship_order import (
    RelationshipPlace,
    relationship_order_key,
    relationship_place_of,
)


@dataclass
class _Tenant:
    entities: dict[EntityId, Entity] = field(default_factory=dict)
    relationships: dict[RelationshipId, Relationship] = field(default_factory=dict)
    # blocking key -> the entities carrying it, by id (kept current by every upsert, so a
    # lexical read takes the entities without looking each id up)
    blocks: dict[str, dict[EntityId, Entity]] = field(default_factory=dict)
    # entity id -> ids of the relationships leaving it (`outgoing`) and reaching it
    # (`incoming`); no relationship is in both of one entity (no self-loops), so their
    # sizes are its degrees
    outgoing: dict[EntityId, dict[RelationshipId, None]] = field(default_factory=dict)
    incoming: dict[EntityId, dict[RelationshipId, None]] = field(default_factory=dict)
    # entity type -> how many indexed entities are of it (`index_entity` and
    # `unindex_entity` count them, so every write keeps it current), sorted
    # by type as `in_type_order` sorts (Python's string order), so that listing the first
    # types reads no entity and sorts nothing; a type none is of is not a key
    type_counts: SortedDict = field(default_factory=SortedDict)
    # blocking key -> its entities in `id_order_key` order, built when a capped read needs it
    sorted_blocks: dict[str, list[Entity]] = field(default_factory=dict)
    # the keys with a block, sorted, for prefix seeks: a key whose block empties leaves at
    # once, a new key waits in `new_keys` until the next seek adds them all (a bulk
    # load's keys in one step); each costs O(log n), so a write does not make the next
    # seek re-sort the tenant's keys
    sorted_keys: SortedList = field(default_factory=SortedList)
    new_keys: list[str] = field(default_factory=list)

    def _count_type(self, entity_type: str, change: int) -> None:
        count = self.type_counts.get(entity_type, 0) + change
        if count:
            self.type_counts[entity_type] = count
        else:
            del self.type_counts[entity_type]

    def index_entity(self, entity: Entity) -> None:
        self._count_type(entity.entity_type, 1)
        for key in entity.blocking_keys:
            block = self.blocks.get(key)
            if block is None:
                block = self.blocks[key] = {}
                self.new_keys.append(key)
            block[entity.id] = entity
            self.sorted_blocks.pop(key, None)

    def _ordered(self, key: str) -> list[Entity]:
        ordered = self.sorted_blocks.get(key)
        if ordered is None:
            ordered = self.sorted_blocks[key] = sorted(
                self.blocks[key].values(), key=lambda entity: id_order_key(entity.id)
            )
        return ordered

    def keys_from(self, prefix: str) -> Iterator[str]:
        """The keys with a block that begin with `prefix`, in key order."""
        if self.new_keys:
            # A key whose block emptied before this seek is not added.
            self.sorted_keys.update({key for key in self.new_keys if key in self.blocks})
            self.new_keys.clear()
        for key in self.sorted_keys.irange(minimum=prefix):
            if not key.startswith(prefix):
                return
            yield key

    def prefix_head(
        self, prefix: str, limit: int | None, wanted: frozenset[str] | None = None
    ) -> list[Entity]:
        """The members (of the `wanted` types) of the blocks whose keys begin with
        `prefix`, block after block in key order, each in `id_order_key` order: the
        first `limit` of them (an entity counted once per block it is in)."""
        found: list[Entity] = []
        for key in self.keys_from(prefix):
            room = None if limit is None else limit - len(found)
            if room is not None and room <= 0:
                break
            found += self.block_head(key, room, wanted)
        return found

    def block_head(
        self, key: str, limit: int | None, wanted: frozenset[str] | None = None
    ) -> list[Entity]:
        """The block's entities (of the `wanted` types only, when given): the first
        `limit` in `id_order_key` order of their ids when the block is larger, else all."""
        block = self.blocks[key]
        if limit is None or len(block) <= limit:
            if wanted is None:
                return list(block.values())
            return [e for e in block.values() if e.entity_type in wanted]
        ordered = self._ordered(key)
        if wanted is None:
            return ordered[:limit]
        return list(islice((e for e in ordered if e.entity_type in wanted), limit))

    def unindex_entity(self, entity: Entity) -> None:
        self._count_type(entity.entity_type, -1)
        for key in entity.blocking_keys:
            self.sorted_blocks.pop(key, None)
            block = self.blocks.get(key)
            if block is not None:
                block.pop(entity.id, None)
                if not block:
                    del self.blocks[key]
                    self.sorted_keys.discard(key)

    def relationships_of(
        self, entity_id: EntityId, direction: Direction, types: list[str] | None
    ) -> Iterator[Relationship]:
        """The relationships of `entity_id` in `direction`, of `types` (all when None),
        in no order."""
        wanted = None if types is None else set(types)
        for side in self._sides(direction):
            for rel_id in side.get(entity_id, {}):
                rel = self.relationships[rel_id]
                if wanted is None or rel.relationship_type in wanted:
                    yield rel

    def degree(self, entity_id: EntityId, direction: Direction) -> int:
        """How many relationships `entity_id` has in `direction`, none of them read."""
        return sum(len(side.get(entity_id, {})) for side in self._sides(direction))

    def _sides(
        self, direction: Direction
    ) -> tuple[dict[EntityId, dict[RelationshipId, None]], ...]:
        if direction is Direction.OUT:
            return (self.outgoing,)
        if direction is Direction.IN:
            return (self.incoming,)
        return self.outgoing, self.incoming

    def link(self, relationship: Relationship) -> None:
        self.outgoing.setdefault(relationship.source_entity_id, {})[relationship.id] = None
        self.incoming.setdefault(relationship.target_entity_id, {})[relationship.id] = None

    def unlink(self, relationship: Relationship) -> None:
        for side, end in (
            (self.outgoing, relationship.source_entity_id),
            (self.incoming, relationship.target_entity_id),
        ):
            links = side.get(end)
            if links is not None:
                links.pop(relationship.id, None)


class InMemoryGraphStore:
    """A `GraphStore` in process memory. Entities and relationships are
    immutable, so reads hand out the stored objects without copying."""

    def __init__(self) -> None:
        self._tenants: dict[TenantId, _Tenant] = {}

    def _tenant(self, tenant_id: TenantId) -> _Tenant:
        return self._tenants.setdefault(tenant_id, _Tenant())

    def _tenant_of(self, tenant_id: TenantId, last: tuple[TenantId, _Tenant] | None) -> _Tenant:
        """`_tenant`, reusing `last` (the previous record's) when the record carries the same
        id object: a batch is nearly always of one tenant, and hashing a UUID is not free."""
        if last is not None and last[0] is tenant_id:
            return last[1]
        return self._tenant(tenant_id)

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        entities = items_of(entities, Entity, "entities")
        last: tuple[TenantId, _Tenant] | None = None
        for entity in entities:
            tenant = self._tenant_of(entity.tenant_id, last)
            last = entity.tenant_id, tenant
            previous = tenant.entities.get(entity.id)
            if previous is not None:
                tenant.unindex_entity(previous)
            tenant.entities[entity.id] = entity
            tenant.index_entity(entity)

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        relationships = items_of(relationships, Relationship, "relationships")
        tenants: list[_Tenant] = []
        missing: list[EntityId] = []
        last: tuple[TenantId, _Tenant] | None = None
        for rel in relationships:
            tenant = self._tenant_of(rel.tenant_id, last)
            last = rel.tenant_id, tenant
            tenants.append(tenant)
            for end in (rel.source_entity_id, rel.target_entity_id):
                if end not in tenant.entities:
                    missing.append(end)
        if missing:
            raise MissingEndpointError(missing)
        for rel, tenant in zip(relationships, tenants, strict=True):
            previous = tenant.relationships.get(rel.id)
            if previous is not None:
                tenant.unlink(previous)
            tenant.relationships[rel.id] = rel
            tenant.link(rel)

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        ids, tenant_id = entity_ids_of(ids), tenant_id_of(tenant_id)
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        found = (tenant.entities.get(entity_id) for entity_id in dict.fromkeys(ids))
        return [entity for entity in found if entity is not None]

    async def embedding_texts(
        self, ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str]:
        """`TextReads`: the store holds whole entities, so this reads them (through
        `get_entities`, which a view of another store may answer) and asks each its text."""
        return {e.id: e.embedding_text() for e in await self.get_entities(ids, tenant_id)}

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
        limit_per_key, limit_per_prefix = block_caps_of(limit_per_key, limit_per_prefix)
        entity_types = names_of(entity_types, "entity_types")
        tenant = self._tenants.get(tenant_id_of(tenant_id))
        if tenant is None:
            return []
        wanted = None if entity_types is None else frozenset(entity_types)
        members = [
            tenant.block_head(key, limit_per_key, wanted)
            for key in dict.fromkeys(keys)
            if key in tenant.blocks
        ]
        members += [tenant.prefix_head(p, limit_per_prefix, wanted) for p in set(prefixes)]
        # The entities themselves: they are in memory already, and whole. Every block
        # holds the one stored object of an entity, so identity tells repeats apart.
        distinct: dict[int, Entity] = {}
        for block in members:
            for entity in block:
                distinct[id(entity)] = entity
        return list(distinct.values())

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
        entity_ids, tenant_id = entity_ids_of(entity_ids, "entity_ids"), tenant_id_of(tenant_id)
        direction, types, limit_per_entity = relationship_filters_of(
            direction, types, limit_per_entity
        )
        place = relationship_place_of(after)
        tenant = self._tenants.get(tenant_id) or _Tenant()
        result: dict[EntityId, list[Relationship]] = {}
        for entity_id in dict.fromkeys(entity_ids):
            rels = [
                rel
                for rel in tenant.relationships_of(entity_id, direction, types)
                if place is None or place.is_before(rel)
            ]
            rels.sort(key=relationship_order_key)
            result[entity_id] = rels if limit_per_entity is None else rels[:limit_per_entity]
        return result

    async def relationship_counts(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
    ) -> dict[EntityId, int]:
        entity_ids, tenant_id = entity_ids_of(entity_ids, "entity_ids"), tenant_id_of(tenant_id)
        direction, types, _ = relationship_filters_of(direction, types, None)
        tenant = self._tenants.get(tenant_id) or _Tenant()
        if types is None:  # the degrees: no relationship read
            return {i: tenant.degree(i, direction) for i in dict.fromkeys(entity_ids)}
        return {
            entity_id: sum(1 for _ in tenant.relationships_of(entity_id, direction, types))
            for entity_id in dict.fromkeys(entity_ids)
        }

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
        found = await self.relationships_of(
            entity_ids,
            tenant_id,
            direction=direction,
            types=types,
            limit_per_entity=limit_per_entity,
            after=after,
        )
        tenant = self._tenants.get(tenant_id_of(tenant_id)) or _Tenant()
        ends: dict[EntityId, Entity] = {}
        for entity_id, relationships in found.items():
            for relationship in relationships:
                end_id = far_end(relationship, entity_id)
                end = tenant.entities.get(end_id)
                if end is not None:
                    ends[end_id] = end
        return Neighbourhood(relationships=found, entities=ends)

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        ids, tenant_id = entity_ids_of(ids), tenant_id_of(tenant_id)
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return 0
        deleted = 0
        for entity_id in dict.fromkeys(ids):
            entity = tenant.entities.pop(entity_id, None)
            if entity is None:
                continue
            deleted += 1
            tenant.unindex_entity(entity)
            touching = [*tenant.outgoing.pop(entity_id, {}), *tenant.incoming.pop(entity_id, {})]
            for rel_id in touching:
                rel = tenant.relationships.pop(rel_id, None)
                if rel is not None:
                    tenant.unlink(rel)
        return deleted

    async def tenants(self) -> list[TenantId]:
        held = [tenant_id for tenant_id, tenant in self._tenants.items() if tenant.entities]
        return sorted(held, key=id_order_key)

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None = None, limit: int
    ) -> list[Entity]:
        tenant_id, limit = tenant_id_of(tenant_id), page_size_of(limit)
        start = None if after is None else id_order_key(entity_id_of(after, "after"))
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        entities = tenant.entities.values()
        later = entities if start is None else (e for e in entities if e.id.int > start)
        return heapq.nsmallest(limit, later, key=lambda entity: entity.id.int)

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        tenant_id, limit = tenant_id_of(tenant_id), optional_count_of(limit, "limit")
        after = type_after_of(after)
        tenant = None if limit == 0 else self._tenants.get(tenant_id)
        if tenant is None:
            return {}
        counts = tenant.type_counts
        if after is None:
            return dict(islice(counts.items(), limit))
        later = counts.irange(minimum=after, inclusive=(False, True))
        return {entity_type: counts[entity_type] for entity_type in islice(later, limit)}

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        entities = items_of(entities, Entity, "entities")
        rewritten = 0
        for read in entities:
            tenant = self._tenants.get(read.tenant_id)
            stored = None if tenant is None else tenant.entities.get(read.id)
            if tenant is None or stored is None or _derivation(stored) != _derivation(read):
                continue
            fresh = stored.rekeyed()
            if fresh is None:
                continue
            tenant.unindex_entity(stored)
            tenant.entities[read.id] = fresh
            tenant.index_entity(fresh)
            rewritten += 1
        return rewritten


def _derivation(entity: Entity) -> tuple[str, str, str, tuple[str, ...]]:
    """What `rewrite_keys` checks is unchanged since a read: the fields keys are derived
    from and those derived (aliases change the keys they make)."""
    return entity.name, entity.entity_type, entity.normalized_name, entity.blocking_keys
