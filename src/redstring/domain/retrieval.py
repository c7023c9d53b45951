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
    """

    entity: Entity
    score: float
    semantic: float | None
    lexical: float | None


class RetrievalResult(FrozenModel):
    """The matches for `query`, best first."""

    query: str
    matches: tuple[ScoredEntity, ...]
