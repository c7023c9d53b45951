"""Small builders of domain objects for tests."""

from __future__ import annotations

import uuid

from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, RelationshipId, TenantId
from redstring.domain.properties import PropertyValue
from redstring.domain.relationship import Relationship


def new_tenant() -> TenantId:
    """A fresh random tenant, so tests never see each other's data."""
    return TenantId(uuid.uuid4())


def make_entity(
    tenant_id: TenantId,
    name: str,
    entity_type: str = "thing",
    *,
    entity_id: uuid.UUID | None = None,
    description: str | None = None,
    properties: dict[str, PropertyValue] | None = None,
) -> Entity:
    """An entity with a random id unless one is given."""
    return Entity(
        id=EntityId(entity_id or uuid.uuid4()),
        tenant_id=tenant_id,
        name=name,
        entity_type=entity_type,
        description=description,
        properties=properties or {},
    )


def make_relationship(
    source: Entity,
    target: Entity,
    relationship_type: str = "RELATED_TO",
    *,
    relationship_id: uuid.UUID | None = None,
    confidence: float = 1.0,
    properties: dict[str, PropertyValue] | None = None,
) -> Relationship:
    """A relationship in the source's tenant, with a random id unless one is given."""
    return Relationship(
        id=RelationshipId(relationship_id or uuid.uuid4()),
        tenant_id=source.tenant_id,
        source_entity_id=source.id,
        target_entity_id=target.id,
        relationship_type=relationship_type,
        confidence=confidence,
        properties=properties or {},
    )
