"""`Limits`: how much one request may ask for, so that no client can exhaust the server."""

from __future__ import annotations

from dataclasses import dataclass

from redstring.domain.errors import InvalidInputError

# The share of `request_timeout` that one call of the embedding provider may take, its
# retries and waits included (`Limits.embedding_time`). The rest of a request seldom
# needs much (4.2 s for the worst allowed query, docs/benchmarks.md), and a provider
# not answering within it answers 503 with `Retry-After`, where the deadline's 504
# would say the request is too heavy.
EMBEDDING_SHARE_OF_DEADLINE = 0.5


@dataclass(frozen=True)
class Limits:
    """Upper bounds on request arguments; a request over one is refused as bad input.

    Lower bounds (a blank query, a negative `k`) are the domain's to check;
    `first` has none in the domain, so a negative one is refused here.
    """

    max_k: int = 100
    max_query_length: int = 1000
    max_first: int = 200
    max_depth: int = 10
    max_aliases: int = 30
    max_tokens: int = 20_000
    max_batch: int = 1000
    # What a whole request may cost (docs/security.md, "Limits"): the estimated
    # work of an operation (`operation_cost`), the request body in bytes, how
    # deep its JSON may nest, and seconds before its work is cancelled.
    max_cost: int = 20_000
    max_body_bytes: int = 1_048_576
    max_json_depth: int = 64
    request_timeout: float = 10.0
    # Seconds of one turn of the event loop a request's resolvers may hold before
    # the rest of their work waits for later turns (`LoopShare`), so that the server
    # keeps answering other requests, `/healthz` among them, while a large one runs.
    loop_slice: float = 0.005

    @property
    def embedding_time(self) -> float:
        """Seconds one call of the embedding provider may take in a request, retries and
        waits included: `EMBEDDING_SHARE_OF_DEADLINE` of `request_timeout`."""
        return self.request_timeout * EMBEDDING_SHARE_OF_DEADLINE

    def check_retrieve(self, query: str, k: int) -> None:
        """Raise `InvalidInputError` when `query` is too long or `k` too large."""
        if len(query) > self.max_query_length:
            raise InvalidInputError(
                f"query is {len(query)} characters long; the limit is {self.max_query_length}"
            )
        if k > self.max_k:
            raise InvalidInputError(f"k must be at most {self.max_k}, got {k}")

    def check_first(self, first: int) -> None:
        """Raise `InvalidInputError` unless `0 <= first <= max_first`."""
        if first < 0:
            raise InvalidInputError(f"first must not be negative, got {first}")
        if first > self.max_first:
            raise InvalidInputError(f"first must be at most {self.max_first}, got {first}")

    def check_batch(self, size: int, what: str) -> None:
        """Raise `InvalidInputError` when one mutation carries more than `max_batch` items."""
        if size > self.max_batch:
            raise InvalidInputError(
                f"{what} holds {size} items; at most {self.max_batch} per request"
            )
