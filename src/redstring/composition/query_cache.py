"""`CachedQueryEmbeddings`: a bounded LRU cache of query embeddings in front of a provider."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from redstring.composition.entity_vectors import provider_identity
from redstring.composition.observer import NO_OBSERVER, Observer
from redstring.domain.errors import InvalidInputError
from redstring.domain.vectors import check_vector_count
from redstring.ports.embedding_provider import EmbeddingProvider

DEFAULT_MAX_SIZE = 2048


@dataclass(frozen=True)
class _Pending:
    """A text's place in a request to the wrapped provider that has not answered yet."""

    request: asyncio.Future[list[list[float]]]
    position: int
    size: int


class CachedQueryEmbeddings:
    """An `EmbeddingProvider` that remembers the vectors of the last `max_size` query texts.

    Only `embed_query` is cached, per text, keyed by the exact string (no
    normalisation: the wrapped model may tell "Acme" from "acme");
    `embed_documents` passes straight through, because ingestion would only
    evict the queries a UI repeats. A text that another call is already
    embedding is awaited, not requested twice. `hits` counts texts answered
    without a request of their own (from the cache or from a request in
    flight), `misses` the texts sent to the wrapped provider; `observer` is
    told both on every call.

    The LRU is an `OrderedDict` (`move_to_end` / `popitem(last=False)` is
    the whole policy; a dependency would add nothing). Vectors are kept as
    float64 arrays (about `max_size * dimension * 8` bytes, exact for
    Python floats) and handed out as fresh lists, so a caller that mutates
    its result cannot corrupt the cache. Meant for one event loop.
    """

    def __init__(
        self,
        provider: EmbeddingProvider,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        if max_size < 1:
            raise InvalidInputError("max_size must be at least 1")
        self._provider = provider
        self._max_size = max_size
        self._vectors: OrderedDict[str, npt.NDArray[np.float64]] = OrderedDict()
        self._in_flight: dict[str, _Pending] = {}
        self._hits = 0
        self._misses = 0
        self._observer = observer

    @property
    def dimension(self) -> int:
        return self._provider.dimension

    @property
    def identity(self) -> str:
        return provider_identity(self._provider)

    @property
    def max_size(self) -> int:
        return self._max_size

    @property
    def hits(self) -> int:
        return self._hits

    @property
    def misses(self) -> int:
        return self._misses

    @property
    def hit_rate(self) -> float:
        """`hits / (hits + misses)`, 0.0 before the first query."""
        total = self._hits + self._misses
        return self._hits / total if total else 0.0

    def __len__(self) -> int:
        return len(self._vectors)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._provider.embed_documents(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        started = [
            t for t in dict.fromkeys(texts) if t not in self._vectors and t not in self._in_flight
        ]
        if started:
            request = asyncio.ensure_future(self._provider.embed_query(started))
            for position, text in enumerate(started):
                self._in_flight[text] = _Pending(request, position, len(started))
            request.add_done_callback(partial(self._settle, started))
        self._misses += len(started)
        self._hits += len(texts) - len(started)
        self._observer.query_cache(hits=len(texts) - len(started), misses=len(started))
        sources: list[npt.NDArray[np.float64] | _Pending] = []
        for text in texts:
            cached = self._vectors.get(text)
            if cached is not None:
                self._vectors.move_to_end(text)
                sources.append(cached)
            else:
                sources.append(self._in_flight[text])
        return [await self._resolve(source) for source in sources]

    async def _resolve(self, source: npt.NDArray[np.float64] | _Pending) -> list[float]:
        if not isinstance(source, _Pending):
            vector: list[float] = source.tolist()
            return vector
        # Shielded: a caller that is cancelled must not cancel the request others await.
        vectors = await asyncio.shield(source.request)
        check_vector_count(vectors, source.size)
        return list(vectors[source.position])

    def _settle(self, texts: list[str], request: asyncio.Future[list[list[float]]]) -> None:
        """Forget the request and cache its vectors, if it produced them."""
        for text in texts:
            pending = self._in_flight.get(text)
            if pending is not None and pending.request is request:
                del self._in_flight[text]
        if request.cancelled() or request.exception() is not None:
            return  # the exception is retrieved, so asyncio does not log it as lost
        vectors = request.result()
        if len(vectors) != len(texts):
            return
        for text, vector in zip(texts, vectors, strict=True):
            self._vectors[text] = np.array(vector, dtype=np.float64)
            self._vectors.move_to_end(text)
        while len(self._vectors) > self._max_size:
            self._vectors.popitem(last=False)
