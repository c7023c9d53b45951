"""`Neo4jGraphStore`: the `GraphStore` port on Neo4j."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Self

import neo4j
from neo4j import exceptions as neo4j_errors

from redstring.adapters.neo4j import cypher
from redstring.adapters.neo4j.connection import (
    DEFAULT_SETTINGS,
    Neo4jConnection,
    Neo4jSettings,
    OwnedConnection,
    connect_driver,
    deleted_under_it,
)
from redstring.adapters.neo4j.records import (
    batches_of,
    candidates_from_columns,
    distinct_entity_rows,
    embedding_text_from,
    entity_from,
    rekey_row,
    relationship_from,
    relationship_row,
    whole_entities,
    whole_relationships,
)
from redstring.adapters.neo4j.string_order import server_bound
from redstring.adapters.neo4j.vector_store import Neo4jVectorStore
from redstring.domain.arguments import items_of, names_of, optional_count_of, page_size_of
from redstring.domain.blocking import block_caps_of
from redstring.domain.entity import Entity
from redstring.domain.entity_types import in_type_order, type_after_of
from redstring.domain.errors import MissingEndpointError
from redstring.domain.ids import (
    EntityId,
    TenantId,
    entity_id_of,
    entity_ids_of,
    id_text,
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
from redstring.ports.candidate_reader import CandidateReader
from redstring.ports.vector_store import VectorStore

# LIMIT takes no null: "no limit" is the largest value Cypher accepts.
_NO_LIMIT = 2**63 - 1
# The largest index Cypher slices a list at (`ENTITY_TYPES`' `$limit`): a 32-bit one.
_MAX_SLICE = 2**31 - 1

_CONSTRAINT_FAILED = "Neo.ClientError.Schema.ConstraintValidationFailed"
# How the server's message names an edge of the relationship identity constraint.
_RELATIONSHIP_EXISTS = "already exists with type `RELATES`"


def replaced_under_it(error: neo4j_errors.ClientError) -> bool:
    """Whether a relationship upsert failed because a concurrent transaction committed
    first: an end it had found was deleted (`deleted_under_it`), or another upsert of
    the same id created its edge after this one looked for the edge to replace (the
    identity constraint refuses the second edge). Run again, the upsert replaces the
    edge committed meanwhile, or names the missing end."""
    if deleted_under_it(error):
        return True
    return error.code == _CONSTRAINT_FAILED and _RELATIONSHIP_EXISTS in (error.message or "")


def block_lookup(
    keys: Sequence[str],
    prefixes: Sequence[str],
    tenant_id: TenantId,
    limit_per_key: int | None,
    limit_per_prefix: int | None,
    entity_types: Sequence[str] | None,
) -> dict[str, Any] | None:
    """The parameters of `cypher.FIND_LEXICAL_CANDIDATES`; None when it can find nothing
    (neither keys nor prefixes, or an empty type filter). The caps are checked first
    (`block_caps_of`), whatever is read."""
    limit_per_key, limit_per_prefix = block_caps_of(limit_per_key, limit_per_prefix)
    entity_types = names_of(entity_types, "entity_types")
    if (not keys and not prefixes) or (entity_types is not None and not entity_types):
        return None
    return {
        "keys": list(dict.fromkeys(keys)),
        "prefixes": list(dict.fromkeys(prefixes)),
        "tenant_id": str(tenant_id),
        "limit": _NO_LIMIT if limit_per_key is None else limit_per_key,
        "prefix_limit": _NO_LIMIT if limit_per_prefix is None else limit_per_prefix,
        "types": None if entity_types is None else list(dict.fromkeys(entity_types)),
    }


class Neo4jGraphStore(OwnedConnection):
    """Entities, their lookup keys and relationships in Neo4j; identity is `(tenant_id, id)`.

    Construct from an injected `neo4j.AsyncDriver` (neither owned nor closed)
    or with `connect(uri, auth)` (owned, closed by `close()` or `async with`).
    Construction does no I/O; call `ensure_schema()` once (idempotent).
    Each upsert call is one transaction per `settings.batch_size` rows.
    Errors of an unreachable or timed-out server raise `StoreUnavailableError`.
    """

    def __init__(
        self,
        driver: neo4j.AsyncDriver,
        *,
        database: str | None = None,
        settings: Neo4jSettings = DEFAULT_SETTINGS,
        _owned: bool = False,
    ) -> None:
        self._db = Neo4jConnection(driver, database=database, settings=settings, owned=_owned)

    @classmethod
    def connect(
        cls,
        uri: str,
        auth: tuple[str, str],
        database: str | None = None,
        settings: Neo4jSettings = DEFAULT_SETTINGS,
    ) -> Self:
        return cls(
            connect_driver(uri, auth, settings), database=database, settings=settings, _owned=True
        )

    def candidate_reader(self, vectors: VectorStore) -> CandidateReader | None:
        """A `Neo4jCandidateReader` over this store and `vectors` when `vectors` is a
        `Neo4jVectorStore` on the same driver and database (one round trip a query);
        else None."""
        from redstring.adapters.neo4j.candidate_reader import Neo4jCandidateReader

        if isinstance(vectors, Neo4jVectorStore) and vectors.connection.reads_with(self._db):
            return Neo4jCandidateReader(self, vectors)
        return None

    async def ensure_schema(self) -> None:
        """Create every constraint and index the queries rely on, if missing."""
        for statement in cypher.GRAPH_SCHEMA:
            await self._db.run_schema(statement)

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Batches of `settings.batch_size` entities, each one transaction, up to
        `settings.write_concurrency` of them in flight at once; an entity given
        twice is written once, with its last value."""
        entities = items_of(entities, Entity, "entities")
        await self._db.write_rows(cypher.UPSERT_ENTITIES, distinct_entity_rows(entities))

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Batches of `settings.batch_size` relationships, each one transaction, one at a
        time; each replaces the edge of its id. A batch that a concurrent commit fails
        (`replaced_under_it`) is run again, so concurrent upserts of one id leave the
        edge of the last to commit, and an end deleted meanwhile raises
        `MissingEndpointError`."""
        relationships = items_of(relationships, Relationship, "relationships")
        # One row per id, the last one winning, as sequential upserts would leave it.
        rows = list({r.id: relationship_row(r) for r in relationships}.values())
        for batch in batches_of(rows, self._db.settings.batch_size):

            async def work(tx: neo4j.AsyncTransaction, batch: Any = batch) -> None:
                result = await tx.run(cypher.UPSERT_RELATIONSHIPS, rows=batch)
                record = await result.single(strict=True)
                if record["written"] == len(batch):
                    return
                # Some endpoint is missing: name it, and raise to roll the batch back.
                missing = await (await tx.run(cypher.MISSING_ENDPOINTS, rows=batch)).value()
                raise MissingEndpointError(missing)

            await self._db.write(work, conflict=replaced_under_it)

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        ids, tenant_id = entity_ids_of(ids), tenant_id_of(tenant_id)
        wanted = [str(i) for i in dict.fromkeys(ids)]
        if not wanted:
            return []

        records = await self._db.query(
            cypher.GET_ENTITIES, {"ids": wanted, "tenant_id": str(tenant_id)}
        )
        found = {e["id"]: entity_from(e) for r in records for e in whole_entities(r["entities"])}
        return [found[i] for i in wanted if i in found]

    async def embedding_texts(
        self, ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str]:
        """`TextReads`: one statement reading the fields the text is made of
        (`cypher.EMBEDDING_TEXTS`), none of the keys; the answer is keyed by the ids
        as asked, no id string read back is parsed."""
        ids, tenant_id = entity_ids_of(ids), tenant_id_of(tenant_id)
        wanted = {str(i): i for i in ids}
        if not wanted:
            return {}
        records = await self._db.query(
            cypher.EMBEDDING_TEXTS, {"ids": list(wanted), "tenant_id": str(tenant_id)}
        )
        found = {
            i: embedding_text_from(name, entity_type, description, properties)
            for r in records
            for i, name, entity_type, description, properties in r["found"]
        }
        return {wanted[i]: found[i] for i in wanted if i in found}

    async def tenants(self) -> list[TenantId]:
        records = await self._db.query(cypher.TENANTS, {})
        return [TenantId(uuid.UUID(record["tenant_id"])) for record in records]

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None = None, limit: int
    ) -> list[Entity]:
        tenant_id, limit = tenant_id_of(tenant_id), page_size_of(limit)
        start = "" if after is None else id_text(entity_id_of(after, "after"))
        records = await self._db.query(
            cypher.ENTITY_PAGE, {"tenant_id": id_text(tenant_id), "after": start, "limit": limit}
        )
        return [entity_from(e) for record in records for e in whole_entities(record["entities"])]

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        """A scan of the tenant's entities, one statement and one record
        (`cypher.ENTITY_TYPES`): of the types after `after`, those holding a character
        beyond U+FFFF and the first `limit` others in the server's order, which is
        Python's for them, sorted and cut here. When the server cannot compare `after`
        as Python does (`server_bound`), it sends every type after a bound below it, and
        those not after `after` are left out here. `limit == 0` answers {} without a
        statement."""
        tenant = id_text(tenant_id_of(tenant_id))
        limit, after = optional_count_of(limit, "limit"), type_after_of(after)
        if limit == 0:
            return {}
        bound, exact = (None, True) if after is None else server_bound(after)
        # Past `_MAX_SLICE` a limit cuts nothing a server could send: sent uncut, cut here.
        cut = limit if exact and limit is not None and limit <= _MAX_SLICE else None
        [record] = await self._db.query(
            cypher.ENTITY_TYPES, {"tenant_id": tenant, "limit": cut, "after": bound}
        )
        types = ((t, count) for t, count in record["types"])
        if not exact:
            types = ((t, count) for t, count in types if t > after)
        return in_type_order(types, limit)

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        """Batches of `settings.batch_size` entities, each one transaction."""
        entities = items_of(entities, Entity, "entities")
        rows = [row for row in map(rekey_row, entities) if row is not None]
        rewritten = 0
        for batch in batches_of(rows, self._db.settings.batch_size):

            async def work(tx: neo4j.AsyncTransaction, batch: Any = batch) -> int:
                result = await tx.run(cypher.REWRITE_KEYS, rows=batch)
                record = await result.single(strict=True)
                return int(record["rewritten"])

            rewritten += await self._db.write(work)
        return rewritten

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
        tenant_id = tenant_id_of(tenant_id)
        params = block_lookup(
            keys, prefixes, tenant_id, limit_per_key, limit_per_prefix, entity_types
        )
        if params is None:
            return []
        [record] = await self._db.query(cypher.FIND_LEXICAL_CANDIDATES, params)
        return list(candidates_from_columns(tenant_id, record))

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
        found, _, _ = await self._relationships(
            cypher.RELATIONSHIPS_OF,
            entity_ids,
            tenant_id,
            direction,
            types,
            limit_per_entity,
            after,
        )
        return found

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
        """`relationships_of` and the far ends' entities in one statement, each far end
        sent once."""
        found, records, cut_here = await self._relationships(
            cypher.RELATIONSHIPS_WITH_ENDS,
            entity_ids,
            tenant_id,
            direction,
            types,
            limit_per_entity,
            after,
        )
        ends = (entity_from(e) for record in records for e in whole_entities(record["ends"]))
        entities = {e.id: e for e in ends}
        if cut_here:  # the ends of the relationships left out went too
            far = {far_end(r, entity_id) for entity_id, rs in found.items() for r in rs}
            entities = {i: e for i, e in entities.items() if i in far}
        return Neighbourhood(relationships=found, entities=entities)

    async def _relationships(
        self,
        statements: Mapping[str, str],
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        direction: Direction,
        types: Sequence[str] | None,
        limit_per_entity: int | None,
        after: object,
    ) -> tuple[dict[EntityId, list[Relationship]], list[neo4j.Record], bool]:
        """Run the statement of `direction` of `statements` (keyed by direction, their
        relationships in a column `found`); every asked id mapped to its relationships,
        the records (none when no id is asked), and whether the relationships were
        left out and cut here rather than on the server.

        The server keeps those after `after` and cuts at `limit_per_entity` when it
        compares `after`'s type as Python does (`server_bound`); otherwise it sends
        every relationship after a bound below that type, uncut, and those not after
        `after` are left out here, the rest sorted and cut."""
        entity_ids, tenant_id = entity_ids_of(entity_ids, "entity_ids"), tenant_id_of(tenant_id)
        direction, types, limit_per_entity = relationship_filters_of(
            direction, types, limit_per_entity
        )
        place = relationship_place_of(after)
        after_type, after_id, cut_here = None, None, False
        if place is not None:
            after_type, exact = server_bound(place.relationship_type)
            after_id, cut_here = (id_text(place.id), False) if exact else (None, True)
        wanted = list(dict.fromkeys(entity_ids))
        result_map: dict[EntityId, list[Relationship]] = {i: [] for i in wanted}
        if not wanted:
            return result_map, [], False
        uncut = limit_per_entity is None or cut_here
        records = await self._db.query(
            statements[direction.value],
            {
                "ids": [str(i) for i in wanted],
                "tenant_id": str(tenant_id),
                "types": types,
                "limit": _NO_LIMIT if uncut else limit_per_entity,
                "after_type": after_type,
                "after_id": after_id,
            },
        )
        by_text = {str(i): i for i in wanted}
        for record in records:
            for entity_id, relationships in record["found"]:
                read = [relationship_from(r) for r in whole_relationships(relationships)]
                if cut_here and place is not None:
                    later = sorted(filter(place.is_before, read), key=relationship_order_key)
                    read = later[:limit_per_entity]
                result_map[by_text[entity_id]] = read
        return result_map, records, cut_here

    async def relationship_counts(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
    ) -> dict[EntityId, int]:
        """One statement counting on the server (`cypher.RELATIONSHIP_COUNTS`): without
        types, each node's degree; with types, a read of each edge's type."""
        entity_ids, tenant_id = entity_ids_of(entity_ids, "entity_ids"), tenant_id_of(tenant_id)
        direction, types, _ = relationship_filters_of(direction, types, None)
        wanted = list(dict.fromkeys(entity_ids))
        counts: dict[EntityId, int] = dict.fromkeys(wanted, 0)
        if not wanted:
            return counts
        statements = (
            cypher.RELATIONSHIP_COUNTS if types is None else cypher.TYPED_RELATIONSHIP_COUNTS
        )
        records = await self._db.query(
            statements[direction.value],
            {"ids": [str(i) for i in wanted], "tenant_id": str(tenant_id), "types": types},
        )
        by_text = {str(i): i for i in wanted}
        for record in records:
            for entity_id, count in record["counts"]:
                counts[by_text[entity_id]] = int(count)
        return counts

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        ids, tenant_id = entity_ids_of(ids), tenant_id_of(tenant_id)
        wanted = [str(i) for i in dict.fromkeys(ids)]
        if not wanted:
            return 0

        async def work(tx: neo4j.AsyncTransaction) -> int:
            record = await (
                await tx.run(cypher.DELETE_ENTITIES, ids=wanted, tenant_id=str(tenant_id))
            ).single(strict=True)
            return int(record["deleted"])

        return await self._db.write(work)
