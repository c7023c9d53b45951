"""The Federation 2 variant of the schema: `Entity` keyed by `tenantId id`.

Strawberry keeps one definition per Python type, and a `@key` on `Entity`
itself would show in the plain schema too. So the federated `Entity` is a
subclass that adds only the key and `resolve_reference`, and
`FederatedSchema.get_fields` (Strawberry's hook for per-schema fields) points
every field typed `Entity` at it. Fields, resolvers and descriptions stay
defined once, in `types.py`; the plain schema never sees this module's types.
"""

from __future__ import annotations

import copy
from typing import Any, Final

import strawberry
from strawberry.federation import Schema as StrawberryFederationSchema
from strawberry.types.base import (
    StrawberryContainer,
    StrawberryObjectDefinition,
    get_object_definition,
)
from strawberry.types.field import StrawberryField

from redstring.api.context import RequestContext
from redstring.api.resolvers import retrieval
from redstring.api.schema.types import Entity
from redstring.domain.errors import InvalidInputError

ENTITY_KEY = "tenantId id"
# Pinned, not Strawberry's latest: `@key` is all this subgraph uses, and an older
# `@link` version composes with more gateway versions.
FEDERATION_VERSION: Final = "2.3"


def _key_value(representation: dict[str, Any], field: str) -> strawberry.ID:
    value = representation.get(field)
    if not isinstance(value, str):
        raise InvalidInputError(f"an Entity representation needs {field} as a string")
    return strawberry.ID(value)


@strawberry.federation.type(
    name="Entity",
    keys=[ENTITY_KEY],
    description=get_object_definition(Entity, strict=True).description,
)
class FederatedEntity(Entity):
    """`Entity` as a federated entity. Instances are only made by `resolve_reference`;
    every other field typed `Entity` keeps returning plain `Entity` objects."""

    @classmethod
    async def resolve_reference(
        cls, info: strawberry.Info[RequestContext, None], **representation: Any
    ) -> FederatedEntity | None:
        """One `_entities` representation, answered exactly as `Query.entity` answers:
        tenant authorised, id checked, loaded through the request's entity
        DataLoader, so all representations of one request share one
        `get_entities` call per tenant; null when the tenant has no such entity."""
        found = await retrieval.entity(
            info,
            tenant_id=_key_value(representation, "tenantId"),
            id=_key_value(representation, "id"),
        )
        return None if found is None else cls.from_domain(found.domain)


def _federated(type_: Any) -> Any:
    """`type_` with `Entity` replaced by `FederatedEntity`, through lists and optionals."""
    if type_ is Entity:
        return FederatedEntity
    if isinstance(type_, StrawberryContainer):
        inner = _federated(type_.of_type)
        return type_ if inner is type_.of_type else type(type_)(inner)
    return type_


class FederatedSchema(StrawberryFederationSchema):
    """A Federation 2 subgraph schema over the same roots and types as the plain one."""

    def get_fields(self, type_definition: StrawberryObjectDefinition) -> list[StrawberryField]:
        fields = []
        for field in type_definition.fields:
            federated = _federated(field.type)
            if federated is not field.type:
                field = copy.copy(field)  # the plain schema keeps the original
                field.type = federated
            fields.append(field)
        return fields
