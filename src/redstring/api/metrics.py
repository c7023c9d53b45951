"""`Metrics`: the Prometheus metrics of one app, and the `/metrics` endpoint serving them.

Each app has its own `CollectorRegistry` (never the process-wide default), so
several apps in one process (tests, embedders) count apart. Under several workers
(`redstring serve --workers`), prometheus-client's multiprocess mode is on
(`PROMETHEUS_MULTIPROC_DIR`, set by `redstring.api.server`): every worker writes its
values to files there, and `/metrics` answers the sum of all of them, whichever
worker serves the scrape. `Metrics` is the
`Observer` composition reports store calls, embeddings (each call's outcome
among them, `redstring_embedding_last_outcome`), cache uses and dangling matches
to; the access log middleware reports each request, and the check of the
embedding provider at start its outcome (`embedding_checked`).
Metric names and labels are listed in docs/security.md, "Observability".
"""

from __future__ import annotations

import os
import re
import threading
from enum import StrEnum
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.exposition import choose_encoder
from starlette.requests import Request
from starlette.responses import Response

from redstring.api.request_record import ANONYMOUS, OTHER
from redstring.domain.errors import (
    EmbeddingRefusedError,
    InvalidInputError,
    StoreUnavailableError,
    TextsRefusedError,
)

# From half a millisecond (an in-memory store call) to the default request deadline.
SECONDS_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

# Where the workers' values are when several share the metrics (prometheus-client's
# variable, read by it when first imported).
SHARED_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"


def check_shared_directory() -> None:
    """Raise `InvalidInputError` when `PROMETHEUS_MULTIPROC_DIR` is set to anything but
    a folder this process may write: prometheus-client would fail in each worker's
    start-up, which uvicorn then starts again without end."""
    given = os.environ.get(SHARED_DIRECTORY)
    if given is None:
        return
    if not os.path.isdir(given) or not os.access(given, os.W_OK | os.X_OK):
        raise InvalidInputError(
            f"{SHARED_DIRECTORY} must name a folder the server may write, got {given!r}"
        )


class EmbeddingCheckOutcome(StrEnum):
    """How the check of the embedding provider at start ended (`log_embedding_check`):
    the values of `redstring_embedding_start_check`'s `outcome` label."""

    OK = "ok"  # it answered with a vector of the vector store's dimension
    REFUSED = "refused"  # `EmbeddingRefusedError`: its settings must change
    WRONG_DIMENSION = "wrong_dimension"  # `DimensionMismatchError`: a vector of another size
    UNAVAILABLE = "unavailable"  # `StoreUnavailableError`: no answer, after its retries
    FAILED = "failed"  # anything else


class EmbeddingOutcome(StrEnum):
    """How a call of the embedding provider ended: the values of
    `redstring_embedding_last_outcome`'s `outcome` label (`embedding_outcome`)."""

    OK = "ok"  # it answered, if only to refuse some texts (`TextsRefusedError`)
    REFUSED = "refused"  # `EmbeddingRefusedError`: its settings must change
    UNAVAILABLE = "unavailable"  # `StoreUnavailableError`: no answer, after its retries
    FAILED = "failed"  # any other exception


def embedding_outcome(error: BaseException | None) -> EmbeddingOutcome | None:
    """The outcome of a provider call that raised `error` (None when it answered), or
    None when the call was cut short (a cancellation, the request's deadline among
    them): that says nothing of the provider. A call that it answered by refusing some
    texts alone (`TextsRefusedError`) is `OK`: the texts are at fault, not the provider."""
    if error is None or isinstance(error, TextsRefusedError):
        return EmbeddingOutcome.OK
    if isinstance(error, EmbeddingRefusedError):
        return EmbeddingOutcome.REFUSED
    if isinstance(error, StoreUnavailableError):
        return EmbeddingOutcome.UNAVAILABLE
    if isinstance(error, Exception):
        return EmbeddingOutcome.FAILED
    return None


NO_OPERATION = "none"  # no operation ran: a refusal, a GraphiQL page
MAX_OPERATION_NAMES = 200


class OperationLabels:
    """Operation labels (`operation_label`) in a bounded set: a client chooses the
    names, and each distinct label value is a time series kept until the process ends.

    The first `max_names` distinct names keep their own value; later ones are `other`."""

    def __init__(self, max_names: int = MAX_OPERATION_NAMES) -> None:
        self._max_names = max_names
        self._known: set[str] = set()

    def label(self, operation: str | None) -> str:
        """`operation` (a request record's, `None` when none ran) as a label value."""
        if operation is None:
            return NO_OPERATION
        if operation in self._known or operation in (ANONYMOUS, OTHER):
            return operation
        if len(self._known) >= self._max_names:
            return OTHER
        self._known.add(operation)
        return operation


class Metrics:
    """Every metric of one app, in `registry`; an `Observer` for composition."""

    def __init__(self, max_operation_names: int = MAX_OPERATION_NAMES) -> None:
        self.registry = CollectorRegistry()
        self._shared = os.environ.get(SHARED_DIRECTORY) or None
        self.operations = OperationLabels(max_operation_names)
        registry = self.registry
        self.requests = Counter(
            "redstring_requests",
            "GraphQL requests served, by operation name and outcome (ok or the error code)",
            ["operation", "outcome"],
            registry=registry,
        )
        self.request_seconds = Histogram(
            "redstring_request_duration_seconds",
            "Time to serve a GraphQL request, body sent, by operation name",
            ["operation"],
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "redstring_requests_in_flight",
            "GraphQL requests being served now",
            registry=registry,
            multiprocess_mode="livesum",  # the live workers' sum; no effect in one process
        )
        self.store_seconds = Histogram(
            "redstring_store_call_duration_seconds",
            "Time of one store call, by store (graph or vector) and method",
            ["store", "method"],
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        self.store_errors = Counter(
            "redstring_store_call_errors",
            "Store calls that raised, by store and method",
            ["store", "method"],
            registry=registry,
        )
        self.embedding_seconds = Histogram(
            "redstring_embedding_duration_seconds",
            "Time of one embedding provider call, by kind (query or documents)",
            ["kind"],
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        self.embedded_texts = Counter(
            "redstring_embedded_texts",
            "Texts sent to the embedding provider, by kind",
            ["kind"],
            registry=registry,
        )
        self.embedding_errors = Counter(
            "redstring_embedding_errors",
            "Embedding provider calls that raised, by kind",
            ["kind"],
            registry=registry,
        )
        self.cache_hits = Counter(
            "redstring_query_cache_hits",
            "Query texts embedded without a provider request of their own",
            registry=registry,
        )
        self.cache_misses = Counter(
            "redstring_query_cache_misses",
            "Query texts sent to the embedding provider by the query cache",
            registry=registry,
        )
        self.embedding_check = Gauge(
            "redstring_embedding_start_check",
            "Workers whose check of the embedding provider at start ended with this outcome "
            "(one process: 1 for its outcome; all 0 until it ends)",
            ["outcome"],
            registry=registry,
            multiprocess_mode="livesum",
        )
        for outcome in EmbeddingCheckOutcome:  # every series there, at 0, before the check
            self.embedding_check.labels(outcome.value).set(0)
        # Beside the start check's gauge, not in its place: that one says what a worker
        # found at start (`wrong_dimension` among it, which only the check measures), and
        # an alert on a rollout keeps its meaning; this one follows the provider from
        # call to call (a key revoked since, a provider back since), as an alert on the
        # provider's state expects.
        self.embedding_last_outcome = Gauge(
            "redstring_embedding_last_outcome",
            "Workers whose last embedding provider call ended with this outcome "
            "(one process: 1 for its outcome; all 0 until a call ends)",
            ["outcome"],
            registry=registry,
            multiprocess_mode="livesum",
        )
        self._last_outcomes = {
            outcome: self.embedding_last_outcome.labels(outcome.value)
            for outcome in EmbeddingOutcome
        }
        for series in self._last_outcomes.values():
            series.set(0)
        self._last_outcome: EmbeddingOutcome | None = None
        self._last_outcome_lock = threading.Lock()
        self._store_timings: dict[tuple[str, str], Histogram] = {}
        self.dangling = Counter(
            "redstring_dangling_matches_skipped",
            "Vector matches skipped because the graph store lacks their entity (ADR 0004)",
            registry=registry,
        )

    def request(self, operation: str | None, outcome: str, seconds: float) -> None:
        """One GraphQL request served (see `OperationLabels` for `operation`)."""
        label = self.operations.label(operation)
        self.requests.labels(label, outcome).inc()
        self.request_seconds.labels(label).observe(seconds)

    def store_call(self, store: str, method: str, seconds: float, *, failed: bool) -> None:
        # The labelled child is looked up once per (store, method): `labels` takes a lock
        # and builds a key on every call, and this runs a few times a request.
        timing = self._store_timings.get((store, method))
        if timing is None:
            timing = self._store_timings[store, method] = self.store_seconds.labels(store, method)
        timing.observe(seconds)
        if failed:
            self.store_errors.labels(store, method).inc()

    def embedding(
        self, kind: str, texts: int, seconds: float, *, error: BaseException | None
    ) -> None:
        self.embedding_seconds.labels(kind).observe(seconds)
        self.embedded_texts.labels(kind).inc(texts)
        if error is not None:
            self.embedding_errors.labels(kind).inc()
        outcome = embedding_outcome(error)
        if outcome is not None:
            self._embedding_ended(outcome)

    def _embedding_ended(self, outcome: EmbeddingOutcome) -> None:
        """`redstring_embedding_last_outcome`: 1 for `outcome`, 0 for the others (set
        only when it changes, under a lock, so that one series alone is ever 1)."""
        with self._last_outcome_lock:
            if outcome is self._last_outcome:
                return
            self._last_outcome = outcome
            for each, series in self._last_outcomes.items():
                series.set(1 if each is outcome else 0)

    def query_cache(self, *, hits: int, misses: int) -> None:
        if hits:
            self.cache_hits.inc(hits)
        if misses:
            self.cache_misses.inc(misses)

    def embedding_checked(self, outcome: EmbeddingCheckOutcome) -> None:
        """The check of the embedding provider at start ended with `outcome`."""
        self.embedding_check.labels(outcome.value).set(1)

    def dangling_skipped(self, count: int) -> None:
        self.dangling.inc(count)

    def process_ended(self) -> None:
        """This worker stops: under several workers, its live gauges (requests in
        flight, the embedding outcomes) leave the sum (its counters stay in it). A worker
        that ends without this (killed) is forgotten by the next scrape
        (`forget_dead_workers`)."""
        if self._shared is not None:
            multiprocess.mark_process_dead(os.getpid(), self._shared)  # type: ignore[no-untyped-call]

    async def endpoint(self, request: Request) -> Response:
        """`GET /metrics`: every metric in Prometheus' text format (OpenMetrics when the
        scraper asks for it), summed over the workers when several share them; no
        credentials."""
        encode, content_type = choose_encoder(request.headers.get("accept", ""))
        registry = self.registry
        if self._shared is not None:
            forget_dead_workers(self._shared)
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry, self._shared)  # type: ignore[no-untyped-call]
        return Response(encode(registry), headers={"content-type": content_type})


# A worker's file of its live gauges (`multiprocess_mode="livesum"`), named by its pid.
_LIVE_FILE = re.compile(r"gauge_live[a-z]*_(\d+)\.db")


def forget_dead_workers(directory: str) -> None:
    """Take the live gauges of each worker that is no longer running (killed, so it
    never ran `process_ended`) out of `directory`: else its requests in flight and its
    embedding outcomes stayed in the sum for good. A pid another process has taken
    since is taken for the worker's, alive."""
    pids = {
        int(found.group(1))
        for path in Path(directory).glob("gauge_live*_*.db")
        if (found := _LIVE_FILE.fullmatch(path.name))
    }
    for pid in pids:
        if pid == os.getpid() or _running(pid):
            continue
        try:
            multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
        except FileNotFoundError:  # another worker's scrape removed it first
            continue


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal: whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's
        return True
    return True
