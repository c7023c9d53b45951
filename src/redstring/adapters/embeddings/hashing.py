"""`HashingEmbeddingProvider`: offline, deterministic, and lexical-flavoured."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from redstring.domain.normalization import normalize_name

_NGRAM_SIZES = (3, 4)


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

    def _embed(self, text: str) -> list[float]:
        padded = f" {normalize_name(text)} "
        buckets: list[int] = []
        signs: list[float] = []
        for n in _NGRAM_SIZES:
            for start in range(len(padded) - n + 1):
                digest = hashlib.blake2b(padded[start : start + n].encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                buckets.append(value % self._dimension)
                signs.append(1.0 if value >> 63 else -1.0)
        vector = np.zeros(self._dimension, dtype=np.float64)
        np.add.at(vector, buckets, signs)
        norm = float(np.linalg.norm(vector))
        return (vector / norm).tolist() if norm > 0 else vector.tolist()

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]
