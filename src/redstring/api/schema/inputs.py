"""The schema's input types, and their conversion into domain objects of one tenant.

An absent id is derived deterministically (`entity_id_for`,
`relationship_id_for`), so sending the same data twice writes nothing new.
A conversion error names the input's index: `entities[3].name: must not be blank`.
"""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

from redstring.api.arguments import (
    entity_id_arg,
    json_properties,
    none_if_unset,
    relationship_id_arg,
)
from redstring.domain.entity import Entity as DomainEntity
from redstring.domain.errors import InvalidFieldsError, InvalidInputError
from redstring.domain.ids import TenantId, entity_id_for, relationship_id_for
from redstring.domain.relationship import Relationship as DomainRelationship

# Domain field names as the schema spells them, for error messages.
_GRAPHQL_NAMES = {
    "entity_type": "entityType",
    "relationship_type": "relationshipType",
    "source_entity_id": "sourceId",
    "target_entity_id": "targetId",
}


@strawberry.input(
    description="An entity to write; `id` defaults to one derived from type and name."
)
class EntityInput:
    id: strawberry.ID | None = strawberry.UNSET
    name: str
    entity_type: str
    description: str | None = strawberry.UNSET
    properties: JSON | None = strawberry.UNSET

    def to_domain(self, tenant_id: TenantId, where: str) -> DomainEntity:
        """The domain entity this input describes in `tenant_id`; `where` prefixes errors."""
        try:
            return DomainEntity.model_validate(
                {
                    "id": self._id(tenant_id, where),
                    "tenant_id": tenant_id,
                    "name": self.name,
                    "entity_type": self.entity_type,
                    "description": none_if_unset(self.description),
                    "properties": json_properties(none_if_unset(self.properties), where),
                }
            )
        except InvalidFieldsError as exc:
            raise InvalidInputError(exc.describe(where, _GRAPHQL_NAMES)) from None

    def _id(self, tenant_id: TenantId, where: str) -> object:
        given_id = none_if_unset(self.id)
        if given_id is not None:
            return entity_id_arg(given_id, f"{where}.id")
        return entity_id_for(tenant_id, self.entity_type, self.name)


@strawberry.input(
    description=(
        "A relationship to write between two existing entities, named by id; "
        "`id` defaults to one derived from source, type and target."
    )
)
class RelationshipInput:
    id: strawberry.ID | None = strawberry.UNSET
    source_id: strawberry.ID
    target_id: strawberry.ID
    relationship_type: str
    confidence: float = 1.0
    properties: JSON | None = strawberry.UNSET

    def to_domain(self, tenant_id: TenantId, where: str) -> DomainRelationship:
        """The domain relationship this input describes in `tenant_id`; `where` prefixes errors."""
        source = entity_id_arg(self.source_id, f"{where}.sourceId")
        target = entity_id_arg(self.target_id, f"{where}.targetId")
        given_id = none_if_unset(self.id)
        if given_id is not None:
            relationship_id: object = relationship_id_arg(given_id, f"{where}.id")
        else:
            relationship_id = relationship_id_for(tenant_id, source, self.relationship_type, target)
        try:
            return DomainRelationship.model_validate(
                {
                    "id": relationship_id,
                    "tenant_id": tenant_id,
                    "source_entity_id": source,
                    "target_entity_id": target,
                    "relationship_type": self.relationship_type,
                    "confidence": self.confidence,
                    "properties": json_properties(none_if_unset(self.properties), where),
                }
            )
        except InvalidFieldsError as exc:
            raise InvalidInputError(exc.describe(where, _GRAPHQL_NAMES)) from None
