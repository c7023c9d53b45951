"""GraphQL argument values turned into domain values, with a clear error when they do not fit."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TypeVar

import strawberry

from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import EntityId, RelationshipId, TenantId, uuid_of_text

T = TypeVar("T")


def none_if_unset(value: T | None) -> T | None:
    """An optional argument's value, `None` when the client left it out (`UNSET`).

    Optional arguments default to `UNSET` rather than `None` so the SDL shows
    no `= null` default.
    """
    return None if value is strawberry.UNSET else value


def json_properties(value: object, where: str) -> dict[str, object]:
    """A JSON `properties` value checked for shape: an object whose values are strings,
    numbers, booleans or flat lists of them. `None` is no properties.

    The domain checks values again; this check exists to name the offending
    key plainly instead of listing every member of the domain's value union.
    """
    field = f"{where}.properties" if where else "properties"
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{field} must be a JSON object")
    for key, item in value.items():
        items = item if isinstance(item, list) else [item]
        if any(i is None or isinstance(i, Mapping | list) for i in items):
            raise InvalidInputError(
                f"{field}.{key}: a property value must be a string, number, boolean "
                "or a list of them"
            )
    return dict(value)


def parse_uuid(value: str, argument: str) -> uuid.UUID:
    """`value` as a UUID, spelled as `redstring.domain.ids.uuid_of_text` reads one, or
    `InvalidInputError` naming the `argument` and the value."""
    read = uuid_of_text(value) if isinstance(value, str) else None
    if read is None:
        shown = value if len(value) <= 64 else value[:64] + "..."
        raise InvalidInputError(f"{argument} must be a UUID, got {shown!r}")
    return read


def tenant_id_arg(value: str, argument: str = "tenantId") -> TenantId:
    """A `tenantId` argument."""
    return TenantId(parse_uuid(value, argument))


def entity_id_arg(value: str, argument: str = "id") -> EntityId:
    """An entity id argument."""
    return EntityId(parse_uuid(value, argument))


def relationship_id_arg(value: str, argument: str = "id") -> RelationshipId:
    """A relationship id argument."""
    return RelationshipId(parse_uuid(value, argument))


def entity_ids_arg(values: Sequence[str], argument: str = "ids") -> list[EntityId]:
    """A list of entity ids; the error names the index of the first bad one."""
    return [entity_id_arg(value, f"{argument}[{index}]") for index, value in enumerate(values)]
