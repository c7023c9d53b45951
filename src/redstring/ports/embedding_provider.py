"""The embedding provider port."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors of `dimension` floats.

    Documents (what is indexed) and queries (what is searched for) are
    embedded by separate calls, because many models prompt them differently.
    """

    @property
    def dimension(self) -> int: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]: ...
