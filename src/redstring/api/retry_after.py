"""The `Retry-After` of a 503: how long a client is asked to wait before it sends the
request again. The wait an outage named where one did (an embedding provider's own
`Retry-After`, `StoreUnavailableError.retry_after`), else `RETRY_AFTER_SECONDS`.

`GraphQLEndpoint` opens an `OutageWait` for each request (`outage_wait`); the errors of
its result note the waits their outages named (`note_outage_waits`) before they are
made public, which drops the outages themselves; the 503 reads the longest
(`unavailable_headers(known_outage_wait())`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from graphql import GraphQLError

from redstring.domain.errors import StoreUnavailableError

RETRY_AFTER_HEADER = "Retry-After"

# The seconds a 503 asks a client to wait when no outage behind it named a wait. The
# outages behind one (a Neo4j restart or leader election, an embedding server coming
# back) last seconds to tens of seconds: long enough that waiting clients do not come
# back in a burst, short enough that the first try after a short outage comes soon.
# Not `REDSTRING_NEO4J_OUTAGE_RETRY`: that is how long a request itself keeps trying (0
# for a server, which answers a lost Neo4j in milliseconds), no estimate of an outage.
RETRY_AFTER_SECONDS = 5

# The longest wait a 503 passes on from an outage that named one: a provider's hour-long
# quota window would otherwise keep every client away for the hour, though the server
# retries the provider itself after at most as long (`RetryPolicy.max_retry_after`).
MAX_RETRY_AFTER_SECONDS = 60


@dataclass
class OutageWait:
    """The longest wait, in seconds, that the outages met by one request named; None
    while none named one."""

    seconds: float | None = None

    def note(self, seconds: float) -> None:
        if self.seconds is None or seconds > self.seconds:
            self.seconds = seconds


_current: ContextVar[OutageWait | None] = ContextVar("redstring_outage_wait", default=None)


@contextmanager
def outage_wait() -> Iterator[OutageWait]:
    """A new `OutageWait` for the request being served, the current one inside the `with`
    block (and in the tasks it starts)."""
    wait = OutageWait()
    token = _current.set(wait)
    try:
        yield wait
    finally:
        _current.reset(token)


def note_outage_waits(errors: Iterable[GraphQLError]) -> None:
    """Note in the current `OutageWait` the waits named by the outages among `errors`
    (those whose original error is a `StoreUnavailableError` with a `retry_after`);
    nothing outside one."""
    wait = _current.get()
    if wait is None:
        return
    for error in errors:
        original = error.original_error
        if isinstance(original, StoreUnavailableError) and original.retry_after is not None:
            wait.note(original.retry_after)


def known_outage_wait() -> float | None:
    """The longest wait the outages of the request being served named, or None."""
    wait = _current.get()
    return None if wait is None else wait.seconds


def seconds_to_wait(named: float | None) -> int:
    """The `Retry-After` of a 503 whose outages named `named` seconds as their longest
    wait: rounded up to whole seconds, at least 1 and at most `MAX_RETRY_AFTER_SECONDS`;
    `RETRY_AFTER_SECONDS` when they named none (or NaN)."""
    if named is None or math.isnan(named):
        return RETRY_AFTER_SECONDS
    return max(1, math.ceil(min(named, MAX_RETRY_AFTER_SECONDS)))


def unavailable_headers(named: float | None = None) -> dict[str, str]:
    """The headers of a 503: `Retry-After` in seconds (`seconds_to_wait(named)`)."""
    return {RETRY_AFTER_HEADER: str(seconds_to_wait(named))}
