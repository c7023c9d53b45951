"""What a retrieval asks for and what it returns."""

from __future__ import annotations

from enum import StrEnum

from redstring.domain.entity import Entity
from redstring.domain.record import FrozenModel


class RetrievalMode(StrEnum):
    """Which channels rank candidates."""

    SEMANTIC = "semantic"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


class ScoredEntity(FrozenModel):
    """An entity with its fused rank score and the channel scores behind it.

    `score` is ordinal reciprocal rank fusion, with no 0..1 bound. `semantic`
    and `lexical` are the channel scores on 0..1, or `None` when that channel
    did not rank the entity (which is not the same as ranking it at 0.0).
    `matched_text` is the entity's text the `lexical` score is of, as the entity
    holds it (its name, an alias, another string value: what a search box
    highlights the query in), and `matched_property` the property holding it
    (`aliases`, or another key), `None` for the name; both `None` when `lexical`
    is.
    """

    entity: Entity
    score: float
    semantic: float | None
    lexical: float | None
    matched_text: str | None = None
    matched_property: str | None = None


class RetrievalResult(FrozenModel):
    """The matches for `query`, best first."""

    query: str
    matches: tuple[ScoredEntity, ...]
