"""Identifiers of entities, relationships and tenants.

All three are UUIDs. `entity_id_for` derives an entity id from what names the
entity, so loading the same data twice addresses the same entities.
`tenant_id_of`, `entity_id_of` and `relationship_id_of` are the one rule for
an id handed to a public entry point: a `uuid.UUID` as it is, a string that
spells a UUID (`uuid_of_text`: ASCII hex digits in a UUID's layouts) converted
(the GraphQL API, a JWT's tenants and `Entity(...)` read strings by that rule too),
anything else an `InvalidInputError` naming the argument, so a caller's typo
is never a bare `AttributeError` nor, worse, a silently empty answer.
`Entity(...)`, `Relationship(...)` and `VectorRecord(...)` read their id fields
by the same rule (`redstring.domain.record`): a wrong one there is an
`InvalidFieldsError`, an `InvalidInputError` naming the field.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import NewType

from redstring.domain.arguments import shown_value
from redstring.domain.errors import InvalidInputError
from redstring.domain.normalization import id_form

EntityId = NewType("EntityId", uuid.UUID)
RelationshipId = NewType("RelationshipId", uuid.UUID)
TenantId = NewType("TenantId", uuid.UUID)

# A fixed namespace for redstring's UUID v5 ids; changing it re-keys every derived id.
_ID_NAMESPACE = uuid.UUID("5b1e7f0c-52a4-4c1f-9a55-2d1f3c6e0a77")
_NAMESPACE_BYTES = _ID_NAMESPACE.bytes


def _uuid5(key: str) -> uuid.UUID:
    """`uuid.uuid5(_ID_NAMESPACE, key)`, without recomputing the namespace's bytes each time
    (a bulk load derives an id or two per line)."""
    return uuid.UUID(bytes=hashlib.sha1(_NAMESPACE_BYTES + key.encode()).digest()[:16], version=5)


@lru_cache(maxsize=1 << 14)
def id_text(value: uuid.UUID) -> str:
    """`str(value)`, remembered: the same tenant and entity ids are spelled again and
    again (derived ids, and each row a store writes)."""
    return str(value)


_HYPHENATED = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID_TEXT = re.compile(
    rf"[0-9a-fA-F]{{32}}|{_HYPHENATED}|\{{{_HYPHENATED}\}}|urn:uuid:{_HYPHENATED}"
)


def uuid_of_text(text: str) -> uuid.UUID | None:
    """The UUID `text` spells, or None when it spells none.

    A UUID's string is its 32 hex digits (ASCII, either case), bare or hyphenated
    8-4-4-4-12, the hyphenated form also in braces or after `urn:uuid:`: what
    pydantic's UUID type reads, and so a record's id field. `uuid.UUID(text)` alone
    takes more, whatever `int(text, 16)` takes once braces, `urn:`, `uuid:` and
    hyphens are dropped: other scripts' digits, a `0x`, `_` or a space, some of them
    read as another UUID.
    """
    return uuid.UUID(text) if _UUID_TEXT.fullmatch(text) else None


def _uuid_of(value: object, argument: str) -> uuid.UUID:
    if isinstance(value, uuid.UUID):  # the usual case first: one check on hot paths
        return value
    if isinstance(value, str) and (read := uuid_of_text(value)) is not None:
        return read
    raise InvalidInputError(f"{argument} must be a UUID, got {shown_value(value)}")


def tenant_id_of(value: object, argument: str = "tenant_id") -> TenantId:
    """`value` as a `TenantId`: a `uuid.UUID` as it is, a UUID's string converted.

    Raises `InvalidInputError` naming `argument` for anything else (a string
    that spells no UUID, an int, None).
    """
    return TenantId(_uuid_of(value, argument))


def entity_id_of(value: object, argument: str = "entity_id") -> EntityId:
    """`value` as an `EntityId`, by `tenant_id_of`'s rule."""
    return EntityId(_uuid_of(value, argument))


def relationship_id_of(value: object, argument: str = "relationship_id") -> RelationshipId:
    """`value` as a `RelationshipId`, by `tenant_id_of`'s rule."""
    return RelationshipId(_uuid_of(value, argument))


def entity_ids_of(values: object, argument: str = "ids") -> list[EntityId]:
    """Each of `values` as an `EntityId` (`entity_id_of`); `values` a sequence, not a string."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InvalidInputError(
            f"{argument} must be a sequence of UUIDs, got {shown_value(values)}"
        )
    return [
        EntityId(value) if isinstance(value, uuid.UUID) else entity_id_of(value, f"{argument}[{i}]")
        for i, value in enumerate(values)
    ]


def entity_id_for(tenant_id: TenantId, entity_type: str, name: str) -> EntityId:
    """The deterministic id of the entity named `name` of type `entity_type`.

    Names alike but for case, accents and punctuation (`ACME Corp.` and `acme corp`)
    give the same id (`id_form`, which never changes: stores are keyed by these ids).
    `tenant_id` is read by `tenant_id_of`'s rule (a UUID string is accepted).
    """
    if not isinstance(tenant_id, uuid.UUID):  # inline: a load derives an id per line
        tenant_id = tenant_id_of(tenant_id)
    key = f"{id_text(tenant_id)}\x1f{id_form(entity_type)}\x1f{id_form(name)}"
    return EntityId(_uuid5(key))


def relationship_id_for(
    tenant_id: TenantId, source: EntityId, relationship_type: str, target: EntityId
) -> RelationshipId:
    """The deterministic id of the `relationship_type` edge from `source` to `target`.

    The ids are read by `tenant_id_of`'s rule (a UUID string is accepted).
    """
    if not (
        isinstance(tenant_id, uuid.UUID)
        and isinstance(source, uuid.UUID)
        and isinstance(target, uuid.UUID)
    ):  # inline: a load derives an id per line, and a call costs more than the checks
        tenant_id = tenant_id_of(tenant_id)
        source, target = entity_id_of(source, "source"), entity_id_of(target, "target")
    kind = relationship_type.strip()
    key = f"{id_text(tenant_id)}\x1f{id_text(source)}\x1f{kind}\x1f{id_text(target)}"
    return RelationshipId(_uuid5(key))


def id_order_key(entity_id: uuid.UUID) -> int:
    """The one tie-break rule: ascending `str(id).lower()`, the same on every backend.

    A UUID's canonical string is its 128-bit integer in fixed-width lower-case
    hex with dashes at fixed places, so ordering by the integer is exactly
    ordering by the string, without building the string. The id is read by
    `entity_id_of`'s rule (a UUID's string is that UUID).
    """
    if isinstance(entity_id, uuid.UUID):  # the usual case first: a sort calls this per id
        return entity_id.int
    return entity_id_of(entity_id).int
