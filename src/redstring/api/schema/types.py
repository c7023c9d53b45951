"""The schema's output types: `Entity`, `Relationship`, `ScoredEntity`, `TextRange`,
`RetrievalResult`, `EntityTypeCount`.

Each wraps the frozen domain object it shows (a `Private` field) and is made
by `from_domain`. Edges resolve through the request's DataLoaders, so a query
walking the graph costs one store call per depth, not one per entity.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Self

import strawberry
from strawberry.scalars import JSON

from redstring.api.arguments import none_if_unset
from redstring.api.context import RequestContext
from redstring.api.cursors import place_of_cursor, relationship_cursor
from redstring.api.fragment_order import child_field_names
from redstring.api.loaders import EntityKey, RelationshipCountKey, RelationshipsKey
from redstring.api.schema.enums import Direction
from redstring.domain.entity import Entity as DomainEntity
from redstring.domain.highlight import TextRange as DomainTextRange
from redstring.domain.highlight import highlight_ranges
from redstring.domain.ids import EntityId
from redstring.domain.properties import thaw_properties
from redstring.domain.relationship import Relationship as DomainRelationship
from redstring.domain.retrieval import RetrievalResult as DomainRetrievalResult
from redstring.domain.retrieval import ScoredEntity as DomainScoredEntity

DEFAULT_FIRST = 50


async def _relationships(
    root: Entity,
    info: strawberry.Info[RequestContext, None],
    direction: Direction = Direction.BOTH,
    types: list[str] | None = strawberry.UNSET,
    first: int = DEFAULT_FIRST,
    after: str | None = strawberry.UNSET,
) -> list[Relationship]:
    context = info.context
    context.limits.check_first(first)
    wanted = none_if_unset(types)
    cursor = none_if_unset(after)
    ends = _selected_ends(info)
    key = RelationshipsKey(
        tenant_id=root.domain.tenant_id,
        entity_id=root.domain.id,
        direction=direction.to_domain(),
        types=None if wanted is None else tuple(wanted),
        first=first,
        with_ends=_far_end_selected(direction, ends),
        after=None if cursor is None else place_of_cursor(cursor),
    )
    context.loaders.prime_entities([root.domain])
    found = await context.loaders.relationships.load(key)
    # Every resolver of this depth resumes in the same turn of the loop, here and after
    # the ends below: what each does next waits for the turns `loop_share` gives.
    await context.loop_share.turn()
    # The ends the query walks to are loaded here, for every entity at this depth in
    # one batch (the loader waits for the turns above), so that `source` and `target`
    # resolve without an await each. A store that reads ends (`EndReads`) brought them
    # with the relationships, into the loader's cache: then this is no store call.
    end_keys = [
        EntityKey(r.tenant_id, end_id)
        for r in found
        for end_id in (
            *((r.source_entity_id,) if "source" in ends else ()),
            *((r.target_entity_id,) if "target" in ends else ()),
        )
    ]
    if end_keys:
        loaded = await context.loaders.entities.load_many(end_keys)
        await context.loop_share.turn()
    else:
        loaded = []
    known = {e.id: e for e in loaded if e is not None}
    return [Relationship.from_domain(r, known) for r in found]


async def _relationship_count(
    root: Entity,
    info: strawberry.Info[RequestContext, None],
    direction: Direction = Direction.BOTH,
    types: list[str] | None = strawberry.UNSET,
) -> int:
    wanted = none_if_unset(types)
    key = RelationshipCountKey(
        tenant_id=root.domain.tenant_id,
        entity_id=root.domain.id,
        direction=direction.to_domain(),
        types=None if wanted is None else tuple(wanted),
    )
    count = await info.context.loaders.relationship_counts.load(key)
    await info.context.loop_share.turn()
    return count


def _far_end_selected(direction: Direction, ends: frozenset[str]) -> bool:
    """Whether `ends` holds an end other than the entity itself: following `OUT` edges
    the `source` is the entity (already held), following `IN` edges the `target`."""
    if direction is Direction.OUT:
        return "target" in ends
    if direction is Direction.IN:
        return "source" in ends
    return bool(ends)


def _selected_ends(info: strawberry.Info[RequestContext, None]) -> frozenset[str]:
    """Which of `source` and `target` this `relationships` field selects; every entity
    at one depth shares the field, so the answer is remembered for the request."""
    field_key = tuple(k for k in info.path.as_list() if isinstance(k, str))
    known = info.context.selected_ends.get(field_key)
    if known is None:
        # graphql-core's own resolve info: its field nodes and fragments, walked once
        # each (`Info.selected_fields` would expand a fragment at every spread).
        raw = info._raw_info
        selected = child_field_names(raw.field_nodes, raw.fragments)
        known = frozenset(selected & {"source", "target"})
        info.context.selected_ends[field_key] = known
    return known


async def _end(info: strawberry.Info[RequestContext, None], key: EntityKey) -> Entity:
    entity = await info.context.loaders.entities.load(key)
    await info.context.loop_share.turn()
    if entity is None:
        # Stores drop relationships with their entities, so this is a race with a
        # concurrent delete or a store bug: either way not the caller's fault.
        raise LookupError(f"a relationship points at missing entity {key.entity_id}")
    return Entity.from_domain(entity)


def _end_of(
    root: Relationship, info: strawberry.Info[RequestContext, None], end_id: EntityId
) -> Entity | Awaitable[Entity]:
    """The end at once when it came with the relationship, else through the loader."""
    entity = root.ends.get(end_id)
    if entity is not None:
        return Entity.from_domain(entity)
    return _end(info, EntityKey(root.domain.tenant_id, end_id))


def _source(
    root: Relationship, info: strawberry.Info[RequestContext, None]
) -> Entity | Awaitable[Entity]:
    return _end_of(root, info, root.domain.source_entity_id)


def _target(
    root: Relationship, info: strawberry.Info[RequestContext, None]
) -> Entity | Awaitable[Entity]:
    return _end_of(root, info, root.domain.target_entity_id)


def _cursor(root: Relationship) -> str:
    return relationship_cursor(root.domain)


@strawberry.type(description="A named thing of one tenant's knowledge graph.")
class Entity:
    id: strawberry.ID
    tenant_id: strawberry.ID
    name: str
    normalized_name: str
    entity_type: str
    description: str | None
    properties: JSON
    relationships: list[Relationship] = strawberry.field(
        resolver=_relationships,
        description=(
            "This entity's relationships, ordered by type (by code point) then id; "
            "`first` caps how many, `types` keeps only those types, and `after`, a "
            "relationship's `cursor`, keeps those after it in that order (the next page)."
        ),
    )
    relationship_count: int = strawberry.field(
        resolver=_relationship_count,
        description=(
            "How many relationships `relationships` lists with the same `direction` and "
            "`types`, without `first` or `after`: the total of its pages."
        ),
    )
    domain: strawberry.Private[DomainEntity]

    @classmethod
    def from_domain(cls, entity: DomainEntity) -> Self:
        return cls(
            id=strawberry.ID(str(entity.id)),
            tenant_id=strawberry.ID(str(entity.tenant_id)),
            name=entity.name,
            normalized_name=entity.normalized_name,
            entity_type=entity.entity_type,
            description=entity.description,
            properties=JSON(thaw_properties(entity.properties)),
            domain=entity,
        )


@strawberry.type(description="A directed, typed edge between two entities of one tenant.")
class Relationship:
    id: strawberry.ID
    relationship_type: str
    confidence: float
    properties: JSON
    # The resolvers answer at once when the end was loaded with the relationship,
    # else with an awaitable: GraphQL takes either, the typing plugin only the first.
    source: Entity = strawberry.field(  # type: ignore[assignment]
        resolver=_source, description="The entity this relationship starts at."
    )
    target: Entity = strawberry.field(  # type: ignore[assignment]
        resolver=_target, description="The entity this relationship points at."
    )
    cursor: str = strawberry.field(
        resolver=_cursor,
        description=(
            "This relationship's place in the order of `Entity.relationships`, opaque: "
            "passed as `after`, the next page begins after it, whatever its `direction` "
            "and `types`."
        ),
    )
    domain: strawberry.Private[DomainRelationship]

    # End entities already loaded for this request, by id (see `_relationships`).
    ends: strawberry.Private[Mapping[EntityId, DomainEntity]]

    @classmethod
    def from_domain(
        cls, relationship: DomainRelationship, ends: Mapping[EntityId, DomainEntity] | None = None
    ) -> Relationship:
        return cls(
            id=strawberry.ID(str(relationship.id)),
            relationship_type=relationship.relationship_type,
            confidence=relationship.confidence,
            properties=JSON(thaw_properties(relationship.properties)),
            domain=relationship,
            ends=ends or {},
        )


@strawberry.type(
    description=(
        "A part of a text: from `start` up to, not including, `end`, counted in UTF-16 code "
        "units as JavaScript indexes strings (`text.slice(start, end)`); a character outside "
        "the Basic Multilingual Plane, such as an emoji, counts two."
    )
)
class TextRange:
    start: int
    end: int

    @classmethod
    def from_domain(cls, text: str, part: DomainTextRange) -> TextRange:
        start, end = part.in_utf16(text)
        return cls(start=start, end=end)


async def _matched_ranges(
    root: ScoredEntity, info: strawberry.Info[RequestContext, None]
) -> list[TextRange] | None:
    text = root.matched_text
    if text is None:
        return None
    # A turn first: a retrieve's matches are worked out one a slice of the loop, so the
    # request's deadline can cancel them and other requests are served meanwhile.
    await info.context.loop_share.turn()
    return [TextRange.from_domain(text, part) for part in highlight_ranges(root.query, text)]


@strawberry.type(
    description=(
        "A match: `score` is the fused reciprocal-rank score (ordinal, unbounded); "
        "`semantic` and `lexical` are the channel scores on 0..1, null when that "
        "channel did not rank the entity."
    )
)
class ScoredEntity:
    entity: Entity
    score: float
    semantic: float | None
    lexical: float | None
    matched_text: str | None = strawberry.field(
        description=(
            "The entity's text the `lexical` score is of, as the entity holds it: its name, "
            "an alias or another string value (what a search box highlights the query in); "
            "null when `lexical` is."
        )
    )
    matched_property: str | None = strawberry.field(
        description=(
            "The property holding `matchedText`: `aliases`, or another property's key; "
            "null when `matchedText` is the entity's name, or null."
        )
    )

    matched_ranges: list[TextRange] | None = strawberry.field(
        resolver=_matched_ranges,
        description=(
            "Where in `matchedText` the query matched, for a search box to mark: the parts "
            "of its words that words of the query equal, begin, spell without spaces or "
            "punctuation, or are one typo from, read as the `lexical` score reads them (case, "
            "accents, other scripts romanised, `&` groups joined, `Corp` for `Corporation`), "
            "and the first letters of its words when the query is their initials; in UTF-16 "
            "code units (`TextRange`), sorted, not overlapping. `[]` when no word can be "
            "pointed at; null when `matchedText` is."
        ),
    )
    # The query the match is of, which `matchedRanges` reads.
    query: strawberry.Private[str]

    @classmethod
    def from_domain(cls, scored: DomainScoredEntity, query: str) -> ScoredEntity:
        return cls(
            entity=Entity.from_domain(scored.entity),
            score=scored.score,
            semantic=scored.semantic,
            lexical=scored.lexical,
            matched_text=scored.matched_text,
            matched_property=scored.matched_property,
            query=query,
        )


@strawberry.type(description="The matches for `query`, best first.")
class RetrievalResult:
    query: str
    matches: list[ScoredEntity]

    @classmethod
    def from_domain(cls, result: DomainRetrievalResult) -> RetrievalResult:
        return cls(
            query=result.query,
            matches=[ScoredEntity.from_domain(m, result.query) for m in result.matches],
        )


@strawberry.type(description="An entity type of a tenant and how many of its entities are of it.")
class EntityTypeCount:
    entity_type: str = strawberry.field(
        description=(
            "The type as its entities hold it, which `retrieve`'s `entityTypes` takes as it "
            "is (types differing in case are two)."
        )
    )
    count: int = strawberry.field(description="How many of the tenant's entities are of this type.")
