"""What the mutations return."""

from __future__ import annotations

import strawberry


@strawberry.type(
    description=(
        "What an upsert wrote: `ids` has one id per input, in input order; "
        "`count` is how many distinct items that is."
    )
)
class UpsertResult:
    count: int
    ids: list[strawberry.ID]


@strawberry.type(description="How many of the entities asked for existed and were deleted.")
class DeleteResult:
    count: int
