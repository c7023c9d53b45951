"""What a retrieval asks for and what it returns."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from redstring.domain.entity import Entity


class RetrievalMode(StrEnum):
    """Which channels rank candidates."""

    SEMANTIC = "semantic"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


class ScoredEntity(BaseModel):
    """An entity with its fused rank score and the channel scores behind it.

    `score` is ordinal reciprocal rank fusion, with no 0..1 bound. `semantic`
    and `lexical` are the channel scores on 0..1, or `None` when that channel
    did not rank the entity (which is not the same as ranking it at 0.0).
    """

    model_config = ConfigDict(frozen=True)

    entity: Entity
    score: float
    semantic: float | None
    lexical: float | None


class RetrievalResult(BaseModel):
    """The matches for `query`, best first."""

    model_config = ConfigDict(frozen=True)

    query: str
    matches: tuple[ScoredEntity, ...]
