"""`Observer`: what composition reports about its own work, for whoever measures it.

Composition times store calls and embeddings and counts cache lookups and
dangling matches, but knows nothing of any metrics library: the API supplies
an `Observer` that records them (Prometheus), and everything else gets
`NO_OBSERVER`. Reports are per call, never per entity, so the hot path pays
a few clock reads a request.
"""

from __future__ import annotations

from typing import Protocol


class Observer(Protocol):
    """Receives one report per store call, embedding call, cache use and retrieve."""

    def store_call(self, store: str, method: str, seconds: float, *, failed: bool) -> None:
        """A call of `method` on the `graph` or `vector` store, or on the `candidates`
        reader of both (`find_candidates`, when it is one round trip), took
        `seconds`; `failed` when it raised (a store that is down, a bad argument, a cancellation)."""
        ...

    def embedding(
        self, kind: str, texts: int, seconds: float, *, error: BaseException | None
    ) -> None:
        """The embedding provider took `seconds` to embed `texts` texts of `kind`
        (`query` or `documents`); `error` is what the call raised, None when it answered:
        a refusal (`EmbeddingRefusedError`) is told from an outage
        (`StoreUnavailableError`) by it, and a cancellation from both."""
        ...

    def query_cache(self, *, hits: int, misses: int) -> None:
        """One use of the query embedding cache: texts answered without a provider
        request of their own, and texts sent to the provider."""
        ...

    def dangling_skipped(self, count: int) -> None:
        """A retrieve skipped `count` vector matches whose entity the graph store lacks
        (docs/adr/0004)."""
        ...


class NoObserver:
    """An `Observer` that ignores every report: the default."""

    def store_call(self, store: str, method: str, seconds: float, *, failed: bool) -> None:
        pass

    def embedding(
        self, kind: str, texts: int, seconds: float, *, error: BaseException | None
    ) -> None:
        pass

    def query_cache(self, *, hits: int, misses: int) -> None:
        pass

    def dangling_skipped(self, count: int) -> None:
        pass


NO_OBSERVER: Observer = NoObserver()
