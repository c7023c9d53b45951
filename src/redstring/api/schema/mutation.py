"""`Mutation`: upsert entities and relationships, delete entities; all idempotent."""

from __future__ import annotations

import strawberry

from redstring.api.resolvers import writes
from redstring.api.schema.results import DeleteResult, UpsertResult


@strawberry.type
class Mutation:
    upsert_entities: UpsertResult = strawberry.mutation(
        resolver=writes.upsert_entities,
        description="Write entities (embedded for the semantic channel); same id, same entity.",
    )
    upsert_relationships: UpsertResult = strawberry.mutation(
        resolver=writes.upsert_relationships,
        description=(
            "Write relationships between existing entities; if any endpoint is "
            "missing, nothing is written."
        ),
    )
    delete_entities: DeleteResult = strawberry.mutation(
        resolver=writes.delete_entities,
        description=(
            "Delete entities and every relationship touching them; unknown ids are skipped."
        ),
    )
