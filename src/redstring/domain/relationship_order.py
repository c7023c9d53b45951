"""The one order an entity's relationships are read in, and a place in it to read on from.

Relationships are ordered by relationship type in code point order (Python's string
order), then by id in `id_order_key` order. A `RelationshipPlace` names a point of that
order, `(type, id)`, whether or not a relationship is there: the last relationship of a
page names where the next page begins, whatever the direction or types of the read, and
it still does once that relationship is deleted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Self

from redstring.domain.arguments import shown_value, storable_of
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import id_order_key, relationship_id_of
from redstring.domain.relationship import Relationship

OrderKey = tuple[str, int]


def relationship_order_key(relationship: Relationship) -> OrderKey:
    """Where `relationship` is in the order: its type, then its id (`id_order_key`)."""
    return relationship.relationship_type, id_order_key(relationship.id)


@dataclass(frozen=True)
class RelationshipPlace:
    """The place of a relationship of `relationship_type` and `id` in the order; a read
    `after` it answers the relationships strictly after it.

    `relationship_type` is a string a store can hold (no NUL, no lone surrogate) and is
    compared as it is (a stored type is stripped, so a place with surrounding spaces lies
    between stored types); `id` is any UUID, a relationship's or not, read by
    `relationship_id_of` (a UUID's string is that UUID). Anything else is
    `InvalidInputError`.
    """

    relationship_type: str
    id: uuid.UUID

    def __post_init__(self) -> None:
        storable_of(self.relationship_type, "relationship_type")
        object.__setattr__(self, "id", relationship_id_of(self.id, "id"))

    @classmethod
    def of(cls, relationship: Relationship) -> Self:
        """The place of `relationship`: a page ending with it goes on after it."""
        return cls(relationship.relationship_type, relationship.id)

    def order_key(self) -> OrderKey:
        """This place as `relationship_order_key` puts a relationship here."""
        return self.relationship_type, id_order_key(self.id)

    def is_before(self, relationship: Relationship) -> bool:
        """Whether `relationship` comes strictly after this place."""
        return relationship_order_key(relationship) > self.order_key()


def relationship_place_of(value: object, argument: str = "after") -> RelationshipPlace | None:
    """A read's `after` by `redstring.domain.arguments`' rule: None (from the first) as
    it is, a `RelationshipPlace` as it is, a `Relationship` as its place (the last of
    the previous page); anything else is `InvalidInputError` naming `argument`."""
    if value is None or isinstance(value, RelationshipPlace):
        return value
    if isinstance(value, Relationship):
        return RelationshipPlace.of(value)
    raise InvalidInputError(
        f"{argument} must be a RelationshipPlace or a Relationship, got {shown_value(value)}"
    )
