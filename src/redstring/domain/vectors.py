"""Vector records and matches, the one mapping of cosine onto 0..1, and which vectors
have a direction (the only ones a cosine exists for)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from pydantic import ConfigDict, Field, field_validator

from redstring.domain.errors import DimensionMismatchError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.record import EntityIdField, FrozenModel, Record, TenantIdField
from redstring.domain.text import check_type


def cosine_to_unit(cosine: float) -> float:
    """Cosine in -1..1 mapped onto 0..1 as `(1 + cos) / 2`, the scale Neo4j's index uses."""
    return min(1.0, max(0.0, (1.0 + cosine) / 2.0))


# The largest magnitude that float32 rounds to zero (half its smallest subnormal, a tie
# that rounds to the even zero): a component at or below it is lost in a float32 store.
_FLOAT32_ZERO = float(np.finfo(np.float32).smallest_subnormal) / 2


def has_direction(vector: Sequence[float] | NDArray[np.floating]) -> bool:
    """Whether `vector` has a direction, so that its cosine with another vector exists:
    some component is nonzero once rounded to float32, the precision the vector stores
    keep. A directionless vector (all zeros, such as the hashing provider's embedding
    of text without letters or digits: "!", "...", an emoji) has no cosine similarity
    to anything: a store keeps no vector for it and a search with it finds nothing.

    NaN and infinite components (`all_finite`) are not judged here: `checked_vector`
    refuses them as bad input, since they come from a broken provider, never from
    some text.
    """
    return bool((np.abs(np.asarray(vector, dtype=np.float64)) > _FLOAT32_ZERO).any())


def rows_with_direction(matrix: NDArray[np.floating]) -> NDArray[np.bool_]:
    """`has_direction` of each row of a two-dimensional `matrix`, in one pass."""
    return np.asarray((np.abs(matrix) > _FLOAT32_ZERO).any(axis=1), dtype=np.bool_)


# Beyond this magnitude a component is infinite once stored as float32.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def all_finite(array: NDArray[np.floating]) -> bool:
    """Whether every component of `array` is finite at float32, the precision the vector
    stores keep: not NaN, and no larger in magnitude than float32's largest value (a
    larger one is infinite in a store, and its norm would be too)."""
    return bool((np.abs(array) <= _FLOAT32_MAX).all())


_NOT_FINITE = "contains a NaN or infinite component (at float32, the precision stores keep)"


def check_dimension(expected: int, actual: int, what: str) -> None:
    """Raise `DimensionMismatchError` unless `what`'s dimension `actual` is `expected`."""
    if actual != expected:
        raise DimensionMismatchError(expected, actual, what)


def check_vector_count(vectors: Sequence[Sequence[float]], texts: int) -> None:
    """Raise `ValueError` unless an embedding provider returned one vector per text."""
    if len(vectors) != texts:
        raise ValueError(
            f"the embedding provider returned {len(vectors)} vectors for {texts} texts"
        )


def checked_vector(vector: Sequence[float], dimension: int, what: str) -> NDArray[np.float64]:
    """`vector` as a float64 array, or `DimensionMismatchError` / `ValueError` (NaN, inf:
    `all_finite`)."""
    array = np.asarray(vector, dtype=np.float64)
    if array.ndim != 1 or array.shape[0] != dimension:
        raise DimensionMismatchError(dimension, int(array.size), what)
    if not all_finite(array):
        raise ValueError(f"{what} {_NOT_FINITE}")
    return array


def checked_vectors(
    vectors: Sequence[Sequence[float]], dimension: int, what: str
) -> NDArray[np.float64]:
    """`checked_vector` of each vector, as the rows of one float64 matrix, checked as one
    array; vector by vector only when the array is not right, so that the error names
    the first wrong vector exactly as `checked_vector` does for one."""
    try:
        matrix = np.array(vectors, dtype=np.float64)
    except (ValueError, TypeError):  # ragged, or not numbers
        matrix = np.empty((0, 0))
    if matrix.shape != (len(vectors), dimension) or not all_finite(matrix):
        rows = [checked_vector(v, dimension, what) for v in vectors]
        matrix = np.array(rows, dtype=np.float64).reshape(len(rows), dimension)
    return matrix


def check_finite(vector: Sequence[float], what: str) -> None:
    """Raise `ValueError` unless `all_finite(vector)`."""
    if not all_finite(np.asarray(vector, dtype=np.float64)):
        raise ValueError(f"{what} {_NOT_FINITE}")


# Bumped when a version embeds entities otherwise (their `embedding_text`, the text a
# shipped provider reads of it, or the shipped static model), so that every stored
# vector's `source` differs from the one this version would give it. A change to
# `embedding_text` that leaves some texts as they were (a cut of long ones alone,
# `embedded_text`) need not bump it: the sources of the texts it changes differ anyway.
EMBEDDING_RECIPE = 1


def vector_source(provider: str, text: str) -> str:
    """What a vector was made from, as a short digest: the embedding provider's identity
    (`provider_identity`), the text, and `EMBEDDING_RECIPE`. Two vectors of one source
    are the same vector; another provider, text or recipe gives another source."""
    made_from = f"{EMBEDDING_RECIPE}\x1f{provider}\x1f{text}".encode()
    return hashlib.blake2b(made_from, digest_size=12).hexdigest()


class VectorRecord(Record):
    """The embedding of one entity, with what search filters on, and its `source`
    (`vector_source`), or None when not known."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity_id: EntityIdField
    tenant_id: TenantIdField
    vector: tuple[float, ...]
    entity_type: str
    source: str | None = None

    @field_validator("vector")
    @classmethod
    def _finite(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value:
            raise ValueError("vector must not be empty")
        check_finite(value, "vector")
        return value

    @field_validator("entity_type")
    @classmethod
    def _type(cls, value: str) -> str:
        return check_type(value, "entity_type")


class VectorMatch(FrozenModel):
    """One hit of a vector search: cosine similarity mapped onto 0..1."""

    entity_id: EntityId
    score: float = Field(ge=0.0, le=1.0)


@dataclass(frozen=True)
class StoredSource:
    """The `source` stored with the vector of `(tenant_id, entity_id)` (None when it was
    stored without one): what a sample of a store's vectors reads (`SourceSamples`)."""

    tenant_id: TenantId
    entity_id: EntityId
    source: str | None
