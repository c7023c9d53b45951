"""Small builders of domain objects for tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, RelationshipId, TenantId
from redstring.domain.properties import PropertyValue
from redstring.domain.relationship import Relationship

_recording: list[list[TenantId]] = []


def new_tenant() -> TenantId:
    """A fresh random tenant, so tests never see each other's data."""
    made = TenantId(uuid.uuid4())
    for tenants in _recording:
        tenants.append(made)
    return made


@contextmanager
def tenants_made() -> Iterator[list[TenantId]]:
    """Every tenant `new_tenant` makes inside the block, in order: the data a test wrote to
    a store shared between tests (a server, say), for it to delete afterwards."""
    tenants: list[TenantId] = []
    _recording.append(tenants)
    try:
        yield tenants
    finally:
        _recording[:] = [other for other in _recording if other is not tenants]


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
