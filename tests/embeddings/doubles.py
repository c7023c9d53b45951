"""Provider doubles for the embedding tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

QUERY_AXIS = 0
DOCUMENT_AXIS = 1


class TwoSidedEmbeddings:
    """Gives queries and documents different vectors, and records which side was asked.

    A query vector points along axis 0 and a document vector along axis 1,
    so a vector shows which call made it.
    """

    def __init__(self, dimension: int = 4) -> None:
        self._dimension = dimension
        self.query_calls: list[list[str]] = []
        self.document_calls: list[list[str]] = []

    @property
    def dimension(self) -> int:
        return self._dimension

    def _axis(self, axis: int) -> list[float]:
        return [1.0 if i == axis else 0.0 for i in range(self._dimension)]

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        self.query_calls.append(list(texts))
        return [self._axis(QUERY_AXIS) for _ in texts]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.document_calls.append(list(texts))
        return [self._axis(DOCUMENT_AXIS) for _ in texts]


class GatedEmbeddings:
    """Embeds a text as [len(text), count of earlier query calls]; holds each call at a gate.

    Open `gate` to let calls finish; `fail` makes the next call raise instead.
    """

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.query_calls: list[list[str]] = []
        self.document_calls: list[list[str]] = []
        self.fail: Exception | None = None

    @property
    def dimension(self) -> int:
        return 2

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        self.query_calls.append(list(texts))
        number = len(self.query_calls)
        await self.gate.wait()
        if self.fail is not None:
            failure, self.fail = self.fail, None
            raise failure
        return [[float(len(t)), float(number)] for t in texts]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.document_calls.append(list(texts))
        return [[float(len(t)), -1.0] for t in texts]


class StandInModel:
    """Records every `encode` call; encodes a text as [len(prompt + text), 1, 0]."""

    instances: ClassVar[list[StandInModel]] = []

    def __init__(self, name: str, *, device: str | None = None) -> None:
        self.name = name
        self.device = device
        self.calls: list[dict[str, Any]] = []
        StandInModel.instances.append(self)

    def get_embedding_dimension(self) -> int:
        return 3

    def encode(self, texts: list[str], **options: Any) -> np.ndarray[Any, Any]:
        self.calls.append({"texts": texts, "thread": threading.current_thread(), **options})
        prompt = options.get("prompt") or ""
        return np.array([[float(len(prompt + t)), 1.0, 0.0] for t in texts], dtype=np.float32)
