"""`HashingEmbeddingProvider`: offline, deterministic, and lexical-flavoured."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from redstring.domain.arguments import positive_count_of
from redstring.domain.normalization import normalize_for_vectors

_NGRAM_SIZES = (3, 4)
# Distinct n-grams remembered per provider before the memory is emptied (a few tens of MB).
_CACHE_LIMIT = 1 << 18


def _ngram_hash(gram: str) -> int:
    """A stable 64-bit hash of one n-gram (Python's own `hash` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=8).digest(), "little")


class _GramCodes(dict[str, int]):
    """n-gram -> `2 * bucket + sign bit` for one dimension, computed on first sight.

    The bucket is the hash modulo the dimension; the sign bit is the hash's
    top bit (1 counts +1, 0 counts -1). One small int per gram keeps the
    per-gram work of a batch to a dict lookup; numpy does the rest.
    """

    def __init__(self, dimension: int) -> None:
        super().__init__()
        self.dimension = dimension

    def __missing__(self, gram: str) -> int:
        value = _ngram_hash(gram)
        code = (value % self.dimension) << 1 | value >> 63
        self[gram] = code
        return code


# Texts up to this many characters share their lengths' slices (4 MB if every length occurs).
_SHARED_SLICES_UP_TO = 256


def _slices(length: int) -> tuple[slice, ...]:
    return tuple(slice(start, start + n) for n in _NGRAM_SIZES for start in range(length - n + 1))


_shared_slices = lru_cache(maxsize=None)(_slices)


def _gram_slices(length: int) -> tuple[slice, ...]:
    """The slices that cut a text of `length` characters into its n-grams, for each size in
    `_NGRAM_SIZES` in turn. Texts of one length share them (slicing by a stored `slice` is
    cheaper than computing the bounds for every gram); long texts, rare, get their own."""
    return _shared_slices(length) if length <= _SHARED_SLICES_UP_TO else _slices(length)


class HashingEmbeddingProvider:
    """Hashed character n-grams of the normalised text, L2-normalised.

    This is NOT a semantic model: two texts are near when they share
    character n-grams, so `car` and `automobile` are far apart. It exists so
    that redstring runs offline and deterministically (tests, benchmarks); the
    default provider is `StaticEmbeddingProvider`, and a real deployment may point
    at a model provider.
    """

    def __init__(self, dimension: int = 384) -> None:
        dimension = positive_count_of(dimension, "dimension")
        self._dimension = dimension
        self._codes = _GramCodes(dimension)

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def identity(self) -> str:
        """What makes its vectors (`composition.entity_vectors.provider_identity`)."""
        return f"hashing/{self._dimension}"

    def embed_matrix(self, texts: Sequence[str]) -> NDArray[np.float64]:
        """The vectors of `texts` as the rows of one matrix, computed in the calling thread."""
        codes = self._codes
        if len(codes) > _CACHE_LIMIT:
            codes.clear()
        found: list[int] = []
        counts: list[int] = []
        for text in texts:
            padded = f" {normalize_for_vectors(text)} "
            slices = _gram_slices(len(padded))
            found += map(codes.__getitem__, map(padded.__getitem__, slices))
            counts.append(len(slices))
        code = np.array(found, dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.int64) * self._dimension, counts)
        signs = (code & 1) * 2.0 - 1.0
        flat = np.bincount(
            rows + (code >> 1), weights=signs, minlength=len(texts) * self._dimension
        )
        matrix = flat.reshape(len(texts), self._dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit: NDArray[np.float64] = matrix / np.where(norms > 0, norms, 1.0)
        return unit

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = self.embed_matrix(texts).tolist()
        return vectors

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts)
