"""`HashingEmbeddingProvider`: offline, deterministic, and lexical-flavoured."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from redstring.domain.normalization import normalize_name

_NGRAM_SIZES = (3, 4)


@lru_cache(maxsize=1 << 18)
def _ngram_hash(gram: str) -> int:
    """A stable 64-bit hash of one n-gram (Python's own `hash` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=8).digest(), "little")


class HashingEmbeddingProvider:
    """Hashed character n-grams of the normalised text, L2-normalised.

    This is NOT a semantic model: two texts are near when they share
    character n-grams, so `car` and `automobile` are far apart. It exists so
    that redstring runs offline and deterministically (the embedded default,
    tests, benchmarks); point a real deployment at a model provider.
    """

    def __init__(self, dimension: int = 384) -> None:
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        cells: list[int] = []
        signs: list[float] = []
        for row, text in enumerate(texts):
            padded = f" {normalize_name(text)} "
            for n in _NGRAM_SIZES:
                for start in range(len(padded) - n + 1):
                    value = _ngram_hash(padded[start : start + n])
                    cells.append(row * self._dimension + value % self._dimension)
                    signs.append(1.0 if value >> 63 else -1.0)
        flat = np.bincount(cells, weights=signs, minlength=len(texts) * self._dimension)
        matrix = flat.reshape(len(texts), self._dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).tolist()  # type: ignore[no-any-return]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts)
