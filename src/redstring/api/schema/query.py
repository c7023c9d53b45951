"""`Query`: the read entry points."""

from __future__ import annotations

import strawberry

from redstring.api.resolvers import retrieval
from redstring.api.schema.types import Entity, EntityTypeCount, RetrievalResult


@strawberry.type
class Query:
    retrieve: RetrievalResult = strawberry.field(
        resolver=retrieval.retrieve,
        description=(
            "The `k` entities of the tenant that best match `query`, best first. "
            "`entityTypes` keeps only those types (an empty list matches nothing)."
        ),
    )
    entity: Entity | None = strawberry.field(
        resolver=retrieval.entity,
        description="The entity with this id in this tenant, or null.",
    )
    entity_types: list[EntityTypeCount] = strawberry.field(
        resolver=retrieval.entity_types,
        description=(
            "The entity types of the tenant, each with how many of its entities are of it, "
            "ordered by type (by code point): the first `first` of them after `after` (the "
            "last type of the previous page; from the first when not given); empty for a "
            "tenant without entities. A scan of the tenant's entities on Neo4j, costed as "
            "such."
        ),
    )
