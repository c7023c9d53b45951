"""Per-request DataLoaders: one store call per batch of equal-argument keys, never one per entity.

GraphQL resolves the `relationships` of every entity at one depth in the same
tick of the event loop; the loaders collect those keys and answer them with
one store call per distinct `(tenant, direction, types, first, after)`, every
`relationshipCount` with one `relationship_counts` call per distinct
`(tenant, direction, types)`, and every `source`/`target` with one
`get_entities` call per tenant. When a field
selects a far end and the store reads ends (`EndReads`), that one
call is `relationships_with_ends`, and the ends it brings fill the entity
loader's cache, so the walk to them costs no call of its own (ADR 0007). The
resolvers of one depth complete their objects over several turns of the loop
(`LoopShare`), so a batch is sent once they all have, not in the next turn.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from strawberry.dataloader import Batch, DataLoader, dispatch_batch

from redstring.api.loop_share import LoopShare
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.relationship_order import RelationshipPlace
from redstring.ports.graph_store import EndReads, GraphReader

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class EntityKey:
    """One entity to load."""

    tenant_id: TenantId
    entity_id: EntityId


Arguments = tuple[TenantId, Direction, tuple[str, ...] | None, int, RelationshipPlace | None]


@dataclass(frozen=True)
class RelationshipsKey:
    """The relationships of one entity, as one `relationships` field asks for them;
    `with_ends` when the field selects an end other than the entity itself."""

    tenant_id: TenantId
    entity_id: EntityId
    direction: Direction
    types: tuple[str, ...] | None
    first: int
    with_ends: bool = False
    after: RelationshipPlace | None = None

    def arguments(self) -> Arguments:
        """What must be equal for two keys to share a store call: not `with_ends`, so
        that two fields of one depth differing only in it make one call, not two."""
        return (self.tenant_id, self.direction, self.types, self.first, self.after)


CountArguments = tuple[TenantId, Direction, tuple[str, ...] | None]


@dataclass(frozen=True)
class RelationshipCountKey:
    """How many relationships of one entity, as one `relationshipCount` field asks."""

    tenant_id: TenantId
    entity_id: EntityId
    direction: Direction
    types: tuple[str, ...] | None

    def arguments(self) -> CountArguments:
        """What must be equal for two keys to share a store call."""
        return (self.tenant_id, self.direction, self.types)


class SettledDataLoader(DataLoader[K, V]):
    """A caching DataLoader that sends each batch once `share` has no turn queued.

    Strawberry's sends a batch in the loop turn after its first key; here the
    resolvers that add keys resume over several loop turns (`LoopShare`), and
    a batch sent early would split one depth into several store calls.
    """

    def __init__(
        self,
        load_fn: Callable[[list[K]], Awaitable[Sequence[V]]],
        *,
        share: LoopShare,
    ) -> None:
        super().__init__(load_fn)
        self._share = share

    def load(self, key: K) -> Awaitable[V]:
        cached = self.cache_map.get(key)
        if cached is not None and not cached.cancelled():
            return cached
        future: asyncio.Future[V] = self.loop.create_future()
        self.cache_map.set(key, future)
        batch = self.batch
        if batch is None or batch.dispatched or not batch.tasks:
            batch = self.batch = Batch()
            self._share.when_settled(partial(self._send, batch))
        batch.add_task(key, future)
        return future

    def _send(self, batch: Batch[K, V]) -> None:
        # Strawberry's own sending: the load function over the batch's keys, each
        # future answered (or failed) from its result; the batch holds the task so
        # that it cancels it when every caller is cancelled (a request's deadline).
        task = asyncio.get_running_loop().create_task(dispatch_batch(self, batch))
        batch._dispatch_task = task
        task.add_done_callback(lambda _: setattr(batch, "_dispatch_task", None))


class Loaders:
    """The DataLoaders of one request, over the graph reader they batch calls to, each
    batch sent once the request's `share` of the loop has no turn queued.

    Built per request, so their caches never outlive it: a later request sees
    later writes.
    """

    def __init__(self, graph: GraphReader, share: LoopShare) -> None:
        self._graph = graph
        self._ends = graph if isinstance(graph, EndReads) else None
        self.entities: DataLoader[EntityKey, Entity | None] = SettledDataLoader(
            self._load_entities, share=share
        )
        self.relationships: DataLoader[RelationshipsKey, list[Relationship]] = SettledDataLoader(
            self._load_relationships, share=share
        )
        self.relationship_counts: DataLoader[RelationshipCountKey, int] = SettledDataLoader(
            self._load_relationship_counts, share=share
        )

    def prime_entities(self, entities: Iterable[Entity]) -> None:
        """Remember entities this request already holds, so walking back to them is free."""
        self.entities.prime_many({EntityKey(e.tenant_id, e.id): e for e in entities})

    async def _load_entities(self, keys: list[EntityKey]) -> list[Entity | None]:
        by_tenant: dict[TenantId, list[EntityId]] = defaultdict(list)
        for key in keys:
            by_tenant[key.tenant_id].append(key.entity_id)
        found: dict[EntityKey, Entity] = {}
        for tenant_id, ids in by_tenant.items():
            for entity in await self._graph.get_entities(ids, tenant_id):
                found[EntityKey(tenant_id, entity.id)] = entity
        return [found.get(key) for key in keys]

    async def _load_relationships(self, keys: list[RelationshipsKey]) -> list[list[Relationship]]:
        groups: dict[Arguments, list[RelationshipsKey]] = defaultdict(list)
        for key in keys:
            groups[key.arguments()].append(key)
        found: dict[tuple[Arguments, EntityId], list[Relationship]] = {}
        for arguments, group in groups.items():
            ids = list(dict.fromkeys(key.entity_id for key in group))
            # One call for the group: with the ends when any of its keys wants them (the
            # others' ends come along, cached unused, which costs less than a round trip).
            answer = await self._read(arguments, ids, any(key.with_ends for key in group))
            for entity_id in ids:
                found[arguments, entity_id] = answer.get(entity_id, [])
        return [found[key.arguments(), key.entity_id] for key in keys]

    async def _read(
        self, arguments: Arguments, ids: list[EntityId], with_ends: bool
    ) -> dict[EntityId, list[Relationship]]:
        tenant_id, direction, types, first, after = arguments
        if first == 0:
            return {}
        if with_ends and self._ends is not None:
            neighbourhood = await self._ends.relationships_with_ends(
                ids,
                tenant_id,
                direction=direction,
                types=types,
                limit_per_entity=first,
                after=after,
            )
            self.prime_entities(neighbourhood.entities.values())
            return neighbourhood.relationships
        return await self._graph.relationships_of(
            ids, tenant_id, direction=direction, types=types, limit_per_entity=first, after=after
        )

    async def _load_relationship_counts(self, keys: list[RelationshipCountKey]) -> list[int]:
        groups: dict[CountArguments, list[EntityId]] = defaultdict(list)
        for key in keys:
            groups[key.arguments()].append(key.entity_id)
        found: dict[tuple[CountArguments, EntityId], int] = {}
        for arguments, ids in groups.items():
            tenant_id, direction, types = arguments
            counts = await self._graph.relationship_counts(
                list(dict.fromkeys(ids)), tenant_id, direction=direction, types=types
            )
            for entity_id, count in counts.items():
                found[arguments, entity_id] = count
        return [found.get((key.arguments(), key.entity_id), 0) for key in keys]
