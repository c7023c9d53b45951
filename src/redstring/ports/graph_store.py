"""The graph store port, the narrow reader that retrieval needs, and the optional reads of
relationships with their ends and of the texts entities embed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.neighbourhood import Neighbourhood
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.relationship_order import RelationshipPlace


@runtime_checkable
class GraphReader(Protocol):
    """The reads of a graph store, all scoped to one tenant.

    Every read (and `GraphStore.delete_entities`) reads its ids by
    `tenant_id_of`'s rule: a UUID's string is that UUID, anything else not a
    UUID raises `InvalidInputError` naming the argument (never a silent empty
    answer).
    """

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        """The entities with these ids, in the order asked; missing ids are omitted."""
        ...

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
        """The members of the blocks of `keys`, each entity once, in any order: what
        the lexical channel scores. Keys are lookup keys, as `query_blocking_keys`
        makes them; a store may answer a type key (`t:`), which no query asks for,
        with nothing.

        Of a block larger than `limit_per_key`, the first `limit_per_key` members in
        `id_order_key` order are read. With `entity_types`, only entities of those
        types are read, and the cap applies to them alone: a type that is rare in a
        large block keeps its members.

        With `prefixes`, also for each prefix the members of the blocks whose keys
        begin with it (`query_prefix`), of the asked types: block after block in key
        order, each in `id_order_key` order, the first `limit_per_prefix` of them, an
        entity counted once per block it is in (the order of an index on
        `(key, id)`, so that the cut is the same on every backend). The two caps are
        independent: `limit_per_key` does not bound a prefix, nor `limit_per_prefix`
        a key; `None` is no cap. A cap is read by `block_caps_of`'s rule (an integer
        from 0 to 2**63 - 1, else `InvalidInputError`), and `entity_types` by
        `names_of`'s (a lone string is `InvalidInputError`, not its letters),
        whatever is read.

        A candidate may be the `Entity` itself or a lighter object with the same
        id, tenant, type, names and string properties; the `Retriever` fetches whole
        entities, with `get_entities`, only for the candidates it keeps."""
        ...

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
        """Every asked id mapped to its relationships (`[]` when none), ordered by
        relationship type then id (`redstring.domain.relationship_order`), in one call for
        all ids: with `after`, only those strictly after that place of the order (for each
        asked id), the first `limit_per_entity` of them. `after` is read by
        `relationship_place_of` (a `Relationship` is its place)."""
        ...

    async def relationship_counts(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
    ) -> dict[EntityId, int]:
        """Every asked id mapped to how many relationships `relationships_of` lists for
        it with the same `direction` and `types`, without a cap or `after` (0 for an id
        without any, or without an entity), in one call for all ids; the arguments are
        read as `relationships_of` reads them."""
        ...


@runtime_checkable
class EndReads(Protocol):
    """A graph reader that can read relationships and the entities at their far ends in
    one call (one round trip), where `relationships_of` then `get_entities` take two.

    Optional: callers check `isinstance(store, EndReads)` and otherwise make the
    two reads. A wrapper around a store offers it only when the store it wraps does.
    """

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
        """`relationships`: what `relationships_of` answers for the same arguments;
        `entities`: the far end of each of those relationships, when it exists
        (`Neighbourhood`). Ids are read as every read reads them."""
        ...


@runtime_checkable
class TextReads(Protocol):
    """A graph reader that can read the text each entity embeds (`Entity.embedding_text`)
    from the fields that text is made of, where `get_entities` reads and builds every
    field: what a writer's read-back after its vector write compares (`settle`).

    Optional: callers check `isinstance(store, TextReads)` and otherwise read the
    entities whole (`embedding_texts_of`).
    """

    async def embedding_texts(
        self, ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str]:
        """Each of these ids that `get_entities` would find mapped to its entity's
        `embedding_text()`, in the order asked (an id asked twice once); missing ids are
        omitted. Ids are read as every read reads them."""
        ...


async def embedding_texts_of(
    graph: GraphReader, ids: Sequence[EntityId], tenant_id: TenantId
) -> dict[EntityId, str]:
    """`TextReads.embedding_texts` of `graph` when it offers it, else the same answer
    from its entities read whole (`get_entities`)."""
    if isinstance(graph, TextReads):
        return await graph.embedding_texts(ids, tenant_id)
    return {e.id: e.embedding_text() for e in await graph.get_entities(ids, tenant_id)}


@runtime_checkable
class GraphStore(GraphReader, Protocol):
    """Entities and relationships of many tenants; identity is `(tenant_id, id)`.

    Upserts are idempotent and atomic per call: a relationship whose endpoint
    is missing raises `MissingEndpointError` and nothing of that call is written.
    They read their argument by `redstring.domain.arguments.items_of`: anything
    but a sequence of `Entity` (of `Relationship`) raises `InvalidInputError`
    naming the argument or the item, before anything is written.
    """

    async def upsert_entities(self, entities: Sequence[Entity]) -> None: ...

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None: ...

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        """Delete these entities and every relationship touching them; how many this call
        deleted (of concurrent deletes of one entity, only the one that deletes it counts
        it, so their counts add up to the entities there were)."""
        ...

    async def tenants(self) -> list[TenantId]:
        """Every tenant with an entity in the store, in `id_order_key` order: what a task
        over all of a store's data (`redstring rekey --all-tenants`) goes through."""
        ...

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None = None, limit: int
    ) -> list[Entity]:
        """The tenant's entities in `id_order_key` order of their ids, from the first
        after `after` (from the first of all when None), at most `limit` (1 or more):
        a whole tenant read page by page, each page's last id the next one's `after`.
        Ids are read as every read reads them."""
        ...

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        """Each entity type of the tenant mapped to how many of its entities are of it,
        ordered by type (`in_type_order`), from the first after `after` in that order
        (from the first of all when None), the first `limit` of them (every one when
        None); `{}` for a tenant without entities. Types are told apart as type filters
        tell them (`Company` and `company` are two): a whole list read page by page, each
        page's last type the next one's `after`. The tenant is read as every read reads
        it, `limit` by `optional_count_of`, `after` by `type_after_of`; `limit == 0`
        answers `{}` without reading (`entityTypes(first: 0)` is costed as nothing)."""
        ...

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        """For each of `entities`, as a read of this store returned it, whose keys are
        stale (`Entity.rekeyed` is not None), store the normalised name and blocking
        keys derived afresh (and the lookup keys they make) in place of those stored,
        and nothing else; unless a write since
        that read has changed the stored entity's name, type, normalised name or keys
        (its writer derived them), or deleted it. How many were rewritten. Arguments
        are read as `upsert_entities` reads them."""
        ...
