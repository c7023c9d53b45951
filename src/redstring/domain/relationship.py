"""A directed, typed edge between two entities of the same tenant."""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Any, Self

from pydantic import ConfigDict, Field, field_validator, model_validator

from redstring.domain.arguments import choice_of, names_of, optional_count_of
from redstring.domain.ids import (
    entity_id_of,
    relationship_id_for,
    tenant_id_of,
)
from redstring.domain.properties import Properties, no_properties
from redstring.domain.record import EntityIdField, Record, RelationshipIdField, TenantIdField
from redstring.domain.text import check_type


class Direction(StrEnum):
    """Which edges of an entity to follow: outgoing, incoming or both."""

    OUT = "OUT"
    IN = "IN"
    BOTH = "BOTH"


def relationship_filters_of(
    direction: object, types: object, limit_per_entity: object
) -> tuple[Direction, list[str] | None, int | None]:
    """A relationships read's filters by `redstring.domain.arguments`' rule: a
    `Direction` (or its name in any case), None or a list of type names, None or a
    cap of 0 or more. Every graph store reads its arguments through this, so that a
    slip is the same `InvalidInputError` on each, not a different answer."""
    return (
        choice_of(direction, Direction, "direction"),
        names_of(types, "types"),
        optional_count_of(limit_per_entity, "limit_per_entity"),
    )


class Relationship(Record):
    """`source -[relationship_type]-> target`; identity is `(tenant_id, id)`.

    The type is stripped, not blank and at most `MAX_TYPE_LENGTH` characters, as an
    entity's is; confidence lies in 0..1; self-loops are refused.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: RelationshipIdField
    tenant_id: TenantIdField
    source_entity_id: EntityIdField
    target_entity_id: EntityIdField
    relationship_type: str
    properties: Properties = Field(default_factory=no_properties)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, allow_inf_nan=False)

    @classmethod
    def create(
        cls,
        tenant_id: uuid.UUID | str,
        source_id: uuid.UUID | str,
        relationship_type: str,
        target_id: uuid.UUID | str,
        **fields: Any,
    ) -> Self:
        """The relationship with the id the API derives for it (`relationship_id_for`),
        unless `fields` give an `id`; `fields` are the others (`confidence`, `properties`).

        The ids are read by `tenant_id_of`'s rule (a UUID's string is accepted)."""
        tenant = tenant_id_of(tenant_id)
        source, target = entity_id_of(source_id, "source_id"), entity_id_of(target_id, "target_id")
        if "id" not in fields and isinstance(relationship_type, str):
            fields["id"] = relationship_id_for(tenant, source, relationship_type, target)
        return cls(
            tenant_id=tenant,
            source_entity_id=source,
            target_entity_id=target,
            relationship_type=relationship_type,
            **fields,
        )

    @field_validator("relationship_type")
    @classmethod
    def _type(cls, value: str) -> str:
        return check_type(value, "relationship_type")

    @model_validator(mode="after")
    def _no_self_loop(self) -> Self:
        if self.source_entity_id == self.target_entity_id:
            raise ValueError("a relationship cannot connect an entity to itself")
        return self

    def __hash__(self) -> int:
        return hash((self.tenant_id, self.id))
