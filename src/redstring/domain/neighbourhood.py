"""`Neighbourhood`: some entities' relationships together with the entities at their far ends."""

from __future__ import annotations

from dataclasses import dataclass, field

from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId
from redstring.domain.relationship import Relationship


def far_end(relationship: Relationship, entity_id: EntityId) -> EntityId:
    """The end of `relationship` that is not `entity_id` (one of its ends)."""
    if relationship.source_entity_id == entity_id:
        return relationship.target_entity_id
    return relationship.source_entity_id


@dataclass(frozen=True)
class Neighbourhood:
    """What one read of relationships with their ends answers.

    `relationships` maps every asked id to its relationships, as
    `GraphReader.relationships_of` answers them. `entities` holds, by id, the
    entities at the far ends (`far_end`) of those relationships that exist, and
    no others: an asked entity is there only when another asked entity's
    relationship leads to it.
    """

    relationships: dict[EntityId, list[Relationship]] = field(default_factory=dict)
    entities: dict[EntityId, Entity] = field(default_factory=dict)
