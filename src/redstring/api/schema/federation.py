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
from strawberry.federation.schema import FederationAny
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
ENTITY_TYPENAME = "Entity"  # the one type `_entities` resolves
# Pinned, not Strawberry's latest: `@key` is all this subgraph uses, and an older
# `@link` version composes with more gateway versions.
FEDERATION_VERSION: Final = "2.3"


def _key_value(representation: dict[str, Any], field: str) -> strawberry.ID:
    value = representation.get(field)
    if not isinstance(value, str):
        raise InvalidInputError(f"an Entity representation needs {field} as a string")
    return strawberry.ID(value)


@strawberry.federation.type(
    name=ENTITY_TYPENAME,
    keys=[ENTITY_KEY],
    description=get_object_definition(Entity, strict=True).description,
)
class FederatedEntity(Entity):
    """`Entity` as a federated entity. Instances are only made by `resolve_reference`;
    every other field typed `Entity` keeps returning plain `Entity` objects."""

    @classmethod
    async def resolve_reference(
        cls, /, info: strawberry.Info[RequestContext, None], **representation: Any
    ) -> FederatedEntity | None:
        """One `_entities` representation, answered exactly as `Query.entity` answers:
        tenant authorised, id checked, loaded through the request's entity
        DataLoader, so all representations of one request share one
        `get_entities` call per tenant; null when the tenant has no such entity.

        Strawberry passes the representation's keys as keyword arguments, `info`
        over any key of that name: `cls` is positional-only so that a key named
        `cls` lands among the ignored ones rather than colliding with it."""
        found = await retrieval.entity(
            info,
            tenant_id=_key_value(representation, "tenantId"),
            id=_key_value(representation, "id"),
        )
        return None if found is None else cls.from_domain(found.domain)


def _representation_problem(representation: object) -> InvalidInputError | None:
    """Why `representation` is no `Entity` representation, or None when it may be one
    (its key fields are checked as it is resolved)."""
    if not isinstance(representation, dict):
        return InvalidInputError("a representation must be an object")
    if "__typename" not in representation:
        return InvalidInputError("a representation needs __typename Entity")
    typename = representation["__typename"]
    if typename != ENTITY_TYPENAME:
        return InvalidInputError(f"a representation's __typename must be Entity, got {typename!r}")
    return None


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

    def entities_resolver(
        self, info: strawberry.Info, representations: list[FederationAny]
    ) -> list[FederationAny]:
        """`_entities`: each representation of an `Entity` resolved by Strawberry, and
        each other one answered null with a `BAD_USER_INPUT` error of its own (Strawberry
        would fail the whole field on one without a known `__typename`)."""
        problems = [_representation_problem(r) for r in representations]
        wellformed = [
            r for r, problem in zip(representations, problems, strict=True) if problem is None
        ]
        resolved = iter(super().entities_resolver(info, wellformed))
        # An exception in an item's place is that item's error (graphql-core raises it).
        return [
            next(resolved) if problem is None else FederationAny(problem) for problem in problems
        ]

    def get_fields(self, type_definition: StrawberryObjectDefinition) -> list[StrawberryField]:
        fields = []
        for field in type_definition.fields:
            federated = _federated(field.type)
            if federated is not field.type:
                field = copy.copy(field)  # the plain schema keeps the original
                field.type = federated
            fields.append(field)
        return fields
