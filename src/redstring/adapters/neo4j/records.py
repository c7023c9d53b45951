"""Conversion between domain objects and the property maps stored in Neo4j.

Ids are stored as lower-case UUID strings and user properties as one JSON
string, because Neo4j properties cannot hold nested maps and user keys
must not collide with redstring's own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from neo4j.vector import Vector, VectorDType
from numpy.typing import NDArray

from redstring.domain.blocking import lookup_keys
from redstring.domain.entity import Entity, embedding_text_of
from redstring.domain.ids import EntityId, RelationshipId, TenantId, id_text
from redstring.domain.properties import (
    PropertyValue,
    freeze_properties,
    string_values,
    thaw_properties,
)
from redstring.domain.relationship import Relationship


class Rows(list[dict[str, Any]]):
    """The rows of one `UNWIND $rows` statement, with a constant `repr`.

    The driver builds its debug-log line for every `RUN` from the `repr` of
    all parameters before it checks the log level, which for a batch of
    vectors costs more than sending it. The driver packs a `list` subclass
    as a list.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


def batches_of(rows: list[dict[str, Any]], size: int) -> list[Rows]:
    """`rows` in consecutive batches of at most `size`, one statement's `$rows` each."""
    return [Rows(rows[i : i + size]) for i in range(0, len(rows), size)]


def stored_vectors(matrix: NDArray[np.float64], *, packed: bool) -> list[Any]:
    """The rows of `matrix` as vector properties to write: `Vector`s of big-endian
    float32 when `packed` (the server stores float32 either way, so the values
    written are the same), float lists otherwise.

    A packed vector is sent as its bytes, where a list is a tagged value per
    component, so packing takes the client less CPU (docs/neo4j.md)."""
    if not packed:
        rows: list[Any] = matrix.tolist()
        return rows
    return [Vector(row.tobytes(), VectorDType.F32) for row in matrix.astype(">f4")]


def query_vector(vector: NDArray[np.float64], *, packed: bool) -> Any:
    """A query vector as a parameter: a float64 `Vector` when `packed`, so that scores
    are exactly those of a float list, which it is otherwise."""
    if not packed:
        return vector.tolist()
    return Vector(vector.astype(">f8").tobytes(), VectorDType.F64)


def properties_json(properties: Mapping[str, PropertyValue]) -> str:
    if not properties:  # most entities and relationships have none
        return "{}"
    return json.dumps(thaw_properties(properties), ensure_ascii=False, sort_keys=True)


def _properties(stored: str | None) -> dict[str, PropertyValue]:
    # Most entities have none: skip the JSON parser for the empty object.
    raw = json.loads(stored) if stored and stored != "{}" else {}
    return {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}


def entity_row(entity: Entity) -> dict[str, Any]:
    return {
        "tenant_id": id_text(entity.tenant_id),
        "id": id_text(entity.id),
        "name": entity.name,
        "entity_type": entity.entity_type,
        "description": entity.description,
        "normalized_name": entity.normalized_name,
        "blocking_keys": list(entity.blocking_keys),
        "lookup_keys": list(lookup_keys(entity.blocking_keys)),
        "properties": properties_json(entity.properties),
    }


def rekey_row(read: Entity) -> dict[str, Any] | None:
    """A row of `REWRITE_KEYS`: the entity's keys derived afresh, and those `read` holds
    (what the store must still hold for the rewrite to happen); None when they are the
    same."""
    fresh = read.rekeyed()
    if fresh is None:
        return None
    return {
        "tenant_id": id_text(read.tenant_id),
        "id": id_text(read.id),
        "name": read.name,
        "entity_type": read.entity_type,
        "normalized_name": fresh.normalized_name,
        "blocking_keys": list(fresh.blocking_keys),
        "lookup_keys": list(lookup_keys(fresh.blocking_keys)),
        "read_normalized_name": read.normalized_name,
        "read_blocking_keys": list(read.blocking_keys),
    }


def distinct_entity_rows(entities: Sequence[Entity]) -> list[dict[str, Any]]:
    """`entity_row` of each entity once, at its first place with its last value: what
    upserting them one by one would leave, whatever order the batches commit in."""
    return list({(e.tenant_id, e.id): entity_row(e) for e in entities}.values())


def _stored_entity(
    entity_id: str,
    tenant_id: TenantId,
    name: str,
    entity_type: str,
    description: str | None,
    normalized_name: str,
    blocking_keys: list[str],
    properties: str | None,
) -> Entity:
    """An entity as written by `entity_row`, built without re-validation
    (`model_construct`): every stored entity was validated on its way in, and the
    API reads many per request."""
    return Entity.model_construct(
        id=EntityId(uuid.UUID(entity_id)),
        tenant_id=tenant_id,
        name=name,
        entity_type=entity_type,
        description=description,
        properties=freeze_properties(_properties(properties)),
        normalized_name=normalized_name,
        blocking_keys=tuple(blocking_keys),
    )


# The properties of every entity `entity_row` writes (the others may be absent: Neo4j
# stores no null). A read sees each write as it commits, so a node that a concurrent
# delete commits away after a statement found it comes back without its properties,
# or without some: that map is no entity.
_ENTITY_KEYS = frozenset(
    ("tenant_id", "id", "name", "entity_type", "normalized_name", "blocking_keys")
)
# A relationship's map as a read answers it (`r {.*, source, target}`): the ends' ids
# are null when an end was deleted while the statement read it.
_RELATIONSHIP_KEYS = frozenset(("tenant_id", "id", "relationship_type", "confidence"))


def whole_entities(stored: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The maps of `stored` that hold a whole entity; those of nodes deleted while the
    statement read them are skipped, as an entity not found is."""
    return [s for s in stored if s.keys() >= _ENTITY_KEYS]


def whole_relationships(stored: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The maps of `stored` that hold a whole relationship with both ends' ids; those of
    relationships or ends deleted while the statement read them are skipped."""
    return [
        s
        for s in stored
        if s.keys() >= _RELATIONSHIP_KEYS
        and s.get("source") is not None
        and s.get("target") is not None
    ]


def embedding_text_from(
    name: str, entity_type: str, description: str | None, properties: str | None
) -> str:
    """The `embedding_text` of an entity stored with these fields (`EMBEDDING_TEXTS`),
    its properties decoded only when there are some, and not checked or frozen: only
    their aliases are read."""
    decoded = json.loads(properties) if properties and properties != "{}" else {}
    return embedding_text_of(name, entity_type, description, decoded)


def entity_from(stored: Mapping[str, Any]) -> Entity:
    """The entity as written by `entity_row`, from its whole property map
    (`whole_entities`)."""
    return _stored_entity(
        stored["id"],
        TenantId(uuid.UUID(stored["tenant_id"])),
        stored["name"],
        stored["entity_type"],
        stored.get("description"),
        stored["normalized_name"],
        stored["blocking_keys"],
        stored.get("properties"),
    )


class StoredCandidate:
    """A lexical candidate as `FIND_LEXICAL_CANDIDATES` reads it: no description or
    keys. A query reads a few hundred and keeps a few: the id is parsed and the
    properties decoded only when asked for (and the properties only when the
    entity has any)."""

    __slots__ = (
        "_decoded",
        "_id",
        "_properties",
        "_stored_id",
        "entity_type",
        "name",
        "normalized_name",
        "tenant_id",
    )

    def __init__(
        self,
        entity_id: str,
        tenant_id: TenantId,
        entity_type: str,
        name: str,
        normalized_name: str,
        properties: str | None,
    ) -> None:
        self._stored_id = entity_id
        self._id: EntityId | None = None
        self.tenant_id = tenant_id
        self.entity_type = entity_type
        self.name = name
        self.normalized_name = normalized_name
        self._properties = properties
        self._decoded: Mapping[str, PropertyValue] | None = None

    @property
    def id(self) -> EntityId:
        if self._id is None:
            # As written by `entity_row`: canonical lower-case hex, so its digits are
            # the UUID's integer (cheaper to read than the string's own parse).
            self._id = EntityId(uuid.UUID(int=int(self._stored_id.replace("-", ""), 16)))
        return self._id

    @property
    def properties(self) -> Mapping[str, PropertyValue]:
        if self._decoded is None:
            self._decoded = freeze_properties(_properties(self._properties))
        return self._decoded

    def property_strings(self) -> list[str]:
        if not self._properties or self._properties == "{}":
            return []
        return string_values(self.properties)


class StoredEntities(Mapping[EntityId, Entity]):
    """Entities by id from their property maps (`entity_from`), each built when first
    looked up: a read may bring a few dozen of which a retrieve keeps a few. A map of a
    node deleted while the statement read it is skipped (`whole_entities`)."""

    def __init__(self, stored: Sequence[Mapping[str, Any]]) -> None:
        self._stored = {uuid.UUID(s["id"]): s for s in whole_entities(stored)}
        self._built: dict[uuid.UUID, Entity] = {}

    def __getitem__(self, entity_id: EntityId) -> Entity:
        entity = self._built.get(entity_id)
        if entity is None:
            entity = self._built[entity_id] = entity_from(self._stored[entity_id])
        return entity

    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self._stored

    def __iter__(self) -> Iterator[EntityId]:
        return iter(map(EntityId, self._stored))

    def __len__(self) -> int:
        return len(self._stored)


def candidates_from_columns(
    tenant_id: TenantId, columns: Mapping[str, Any]
) -> list[StoredCandidate]:
    """The candidates of one tenant sent as parallel columns (`FIND_LEXICAL_CANDIDATES`).
    A row without an id, type, name or normalised name is a node deleted while the
    statement read it (`whole_entities`), and is skipped."""
    return [
        StoredCandidate(entity_id, tenant_id, entity_type, name, normalized_name, properties)
        for entity_id, entity_type, name, normalized_name, properties in zip(
            columns["ids"],
            columns["entity_types"],
            columns["names"],
            columns["normalized_names"],
            columns["properties"],
            strict=True,
        )
        if entity_id is not None
        and entity_type is not None
        and name is not None
        and normalized_name is not None
    ]


def relationship_row(relationship: Relationship) -> dict[str, Any]:
    return {
        "tenant_id": id_text(relationship.tenant_id),
        "id": str(relationship.id),
        "source": id_text(relationship.source_entity_id),
        "target": id_text(relationship.target_entity_id),
        "relationship_type": relationship.relationship_type,
        "confidence": relationship.confidence,
        "properties": properties_json(relationship.properties),
    }


def relationship_from(stored: Mapping[str, Any]) -> Relationship:
    """The relationship as written by `relationship_row`, from its whole property map
    (`whole_relationships`), built without re-validation (`model_construct`), as a
    stored entity is: every stored relationship was validated on its way in, by the
    rules of its day, and one whose type is longer than today's cap (`MAX_TYPE_LENGTH`)
    is still read."""
    return Relationship.model_construct(
        id=RelationshipId(uuid.UUID(stored["id"])),
        tenant_id=TenantId(uuid.UUID(stored["tenant_id"])),
        source_entity_id=EntityId(uuid.UUID(stored["source"])),
        target_entity_id=EntityId(uuid.UUID(stored["target"])),
        relationship_type=stored["relationship_type"],
        confidence=float(stored["confidence"]),
        properties=freeze_properties(_properties(stored.get("properties"))),
    )
