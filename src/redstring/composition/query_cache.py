"""`CachedQueryEmbeddings`: a bounded LRU cache of query embeddings, kept per tenant, in
front of a provider."""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from redstring.composition.entity_vectors import provider_identity
from redstring.composition.observer import NO_OBSERVER, Observer
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import TenantId
from redstring.domain.vectors import check_vector_count
from redstring.ports.embedding_provider import EmbeddingProvider

DEFAULT_MAX_SIZE = 2048
# How long an entry goes unused before any tenant's new entry may evict it.
DEFAULT_IDLE_AFTER = 300.0

# What an entry is cached under: a text is shared only within the tenant that searched it.
_Key = tuple[TenantId, str]


@dataclass
class _Entry:
    vector: npt.NDArray[np.float64]
    used: float  # the clock's time of its last use


@dataclass(frozen=True)
class _Pending:
    """A text's place in a request to the wrapped provider that has not answered yet."""

    request: asyncio.Future[list[list[float]]]
    position: int
    size: int


class CachedQueryEmbeddings:
    """Remembers the vectors of the last `max_size` query texts, each for the tenant that
    searched it.

    A tenant embeds its queries through `for_tenant(tenant_id)`, an
    `EmbeddingProvider` that reads and fills only that tenant's entries: a text
    another tenant searched is a miss, asked of the provider, so neither the
    counts nor the answer's speed tell one tenant what another searched. The
    cache itself is no provider (it has no `embed_query` of its own), so it
    cannot be handed, tenant-less, to whatever takes one.

    Entries are keyed by `(tenant, text)`, the text exact (no normalisation:
    the wrapped model may tell "Acme" from "acme"). A view's `embed_documents`
    passes straight through, because ingestion would only evict the queries a
    UI repeats. A text the same tenant is already embedding is awaited, not
    requested twice. `hits` counts texts answered without a request of their
    own (from the cache or from a request in flight), `misses` the texts sent
    to the wrapped provider; `observer` is told both on every call.

    `max_size` bounds all tenants' entries together. A tenant alone has all of
    them. When a new entry passes the bound, the least recently used entry goes
    if it was last used `idle_after` seconds ago or more (the default five
    minutes); else the tenant holding the most entries gives one up, its least
    recently used (of several holding as many, the one whose entry is the least
    recently used). So one tenant's burst of distinct queries evicts other
    tenants' entries in use only down to its own share, then its own; entries
    left idle age out whoever holds them (docs/security.md says what eviction
    can still reveal). The entries are one `OrderedDict` in order of use (a
    tenant's first is its least recently used), beside a count of each tenant's.
    Vectors are kept as float64 arrays (about `max_size * dimension * 8`
    bytes, exact for Python floats) and handed out as fresh lists, so a caller
    that mutates its result cannot corrupt the cache. Meant for one event loop.
    """

    def __init__(
        self,
        provider: EmbeddingProvider,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        observer: Observer = NO_OBSERVER,
        idle_after: float = DEFAULT_IDLE_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_size < 1:
            raise InvalidInputError("max_size must be at least 1")
        self._provider = provider
        self._max_size = max_size
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()  # in order of use
        self._held: Counter[TenantId] = Counter()  # each tenant's entries
        self._idle_after = idle_after
        self._clock = clock
        self._in_flight: dict[_Key, _Pending] = {}
        self._hits = 0
        self._misses = 0
        self._observer = observer

    @property
    def provider(self) -> EmbeddingProvider:
        """The provider the cache asks on a miss."""
        return self._provider

    @property
    def dimension(self) -> int:
        return self._provider.dimension

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
        return len(self._entries)

    def for_tenant(self, tenant_id: TenantId) -> EmbeddingProvider:
        """The provider through which `tenant_id`'s queries are embedded and cached (its
        `embed_documents` passes through; its `identity` is the wrapped provider's)."""
        return _TenantQueries(self, tenant_id)

    async def _embed_query(self, tenant_id: TenantId, texts: Sequence[str]) -> list[list[float]]:
        keys = [(tenant_id, text) for text in texts]
        started = [
            k for k in dict.fromkeys(keys) if k not in self._entries and k not in self._in_flight
        ]
        if started:
            asked = [text for _, text in started]
            request = asyncio.ensure_future(self._provider.embed_query(asked))
            for position, key in enumerate(started):
                self._in_flight[key] = _Pending(request, position, len(started))
            request.add_done_callback(partial(self._settle, started))
        self._misses += len(started)
        self._hits += len(keys) - len(started)
        self._observer.query_cache(hits=len(keys) - len(started), misses=len(started))
        sources: list[npt.NDArray[np.float64] | _Pending] = []
        now = self._clock()
        for key in keys:
            entry = self._entries.get(key)
            if entry is not None:
                entry.used = now
                self._entries.move_to_end(key)
                sources.append(entry.vector)
            else:
                sources.append(self._in_flight[key])
        return [await self._resolve(source) for source in sources]

    async def _resolve(self, source: npt.NDArray[np.float64] | _Pending) -> list[float]:
        if not isinstance(source, _Pending):
            vector: list[float] = source.tolist()
            return vector
        # Shielded: a caller that is cancelled must not cancel the request others await.
        vectors = await asyncio.shield(source.request)
        check_vector_count(vectors, source.size)
        return list(vectors[source.position])

    def _settle(self, keys: list[_Key], request: asyncio.Future[list[list[float]]]) -> None:
        """Forget the request and cache its vectors, if it produced them."""
        for key in keys:
            pending = self._in_flight.get(key)
            if pending is not None and pending.request is request:
                del self._in_flight[key]
        if request.cancelled() or request.exception() is not None:
            return  # the exception is retrieved, so asyncio does not log it as lost
        vectors = request.result()
        if len(vectors) != len(keys):
            return
        now = self._clock()
        for key, vector in zip(keys, vectors, strict=True):
            if key not in self._entries:
                self._held[key[0]] += 1
            self._entries[key] = _Entry(np.array(vector, dtype=np.float64), now)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_size:
                self._evict(now)

    def _evict(self, now: float) -> None:
        """Drop the least recently used entry when idle `idle_after` seconds, else the
        least recently used of the tenants holding the most: the first in order of use
        that one of them holds. A scan of the tenants and of the entries, at most
        `max_size` each: it follows a provider call."""
        oldest = next(iter(self._entries))
        if now - self._entries[oldest].used < self._idle_after:
            most = max(self._held.values())
            oldest = next(key for key in self._entries if self._held[key[0]] == most)
        del self._entries[oldest]
        self._held[oldest[0]] -= 1
        if not self._held[oldest[0]]:
            del self._held[oldest[0]]


@dataclass(frozen=True)
class _TenantQueries:
    """`CachedQueryEmbeddings.for_tenant`: an `EmbeddingProvider` whose `embed_query`
    reads and fills one tenant's entries only."""

    cache: CachedQueryEmbeddings
    tenant_id: TenantId

    @property
    def dimension(self) -> int:
        return self.cache.dimension

    @property
    def identity(self) -> str:
        return provider_identity(self.cache.provider)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.cache.provider.embed_documents(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.cache._embed_query(self.tenant_id, texts)
