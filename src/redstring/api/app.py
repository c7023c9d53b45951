"""`create_app`: the Starlette application serving `/graphql`, `/healthz`, `/readyz`,
`/metrics`, and `/` (a redirect to `/graphql`) with `/favicon.ico`."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from threadpoolctl import threadpool_limits

from redstring.api.access_log import AccessLog
from redstring.api.authentication import NO_AUTH_WARNING, build_authenticator
from redstring.api.bookmarks import BookmarkSeal
from redstring.api.cors import cors_middleware
from redstring.api.demo import load_demo
from redstring.api.endpoint import GraphQLEndpoint
from redstring.api.graphiql import AssetSource, asset_route, graphiql_page
from redstring.api.health import Readiness, healthz_endpoint
from redstring.api.landing import landing_routes
from redstring.api.log_config import configure_logging
from redstring.api.metrics import Metrics
from redstring.api.protections import LoopbackHostsOnly, SecurityHeaders, is_loopback_name
from redstring.api.refusals import EXCEPTION_HANDLERS, GRAPHQL_METHODS
from redstring.api.schema.build import build_schema
from redstring.api.settings import AuthMode, Settings
from redstring.api.start_failure import SAID_FAILURES, StartFailure
from redstring.api.startup import log_embedding_check, log_vector_provenance, open_client
from redstring.api.termination import StartStopped, stopped_by_signal
from redstring.composition.client import Redstring

logger = logging.getLogger("redstring.api")


class _OpenClient:
    """The services of a running app: set at creation when injected, else in the lifespan."""

    def __init__(self, services: Redstring | None) -> None:
        self.services = services

    def __call__(self) -> Redstring:
        if self.services is None:
            raise RuntimeError("the app's services are not open (was its lifespan run?)")
        return self.services


class _ObservedStarlette(Starlette):
    """Starlette with `AccessLog` and `SecurityHeaders` around its whole middleware stack,
    error middleware included, so that a 500 it renders also carries the request id,
    the headers, and is logged; with `loopback_only`, requests for another host than a
    loopback name are refused first (`LoopbackHostsOnly`). A start that failed with an
    error it has said is handed to the server quietly (`StartFailure`)."""

    def __init__(
        self,
        metrics: Metrics,
        start_failure: StartFailure,
        *,
        loopback_only: bool,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # A path with a slash more or less than a route's is a 404 with the error body:
        # Starlette's redirect names an absolute URL of the scheme the server sees, `http`
        # behind a proxy that ends TLS, and has no body.
        self.router.redirect_slashes = False
        self.metrics = metrics
        self.start_failure = start_failure
        self.loopback_only = loopback_only

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        if self.loopback_only:
            stack = LoopbackHostsOnly(stack)
        return AccessLog(SecurityHeaders(stack), self.metrics)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            send = self.start_failure.quiet(send)
        await super().__call__(scope, receive, send)


# Allocations between young collections, and young (then middle) collections between
# older ones, while serving; Python's defaults are (700, 10, 10).
SERVING_GC_THRESHOLD = (20_000, 20, 50)


def freeze_startup_heap() -> None:
    """Move every object alive now out of the cyclic garbage collector's reach.

    A server's heap is mostly what it loaded at start (modules, the schema, and
    with the in-memory stores every entity and vector), and it lives as long as
    the process. Left to the collector, each full collection walks all of it,
    and under load several run a second, because the objects of requests in flight
    survive the young collections and count towards the next full one. Frozen,
    those objects are still freed when their last reference goes; only cycles
    among them would outlive it, so the cycles of start-up are collected first.

    Then the collector runs less often (`SERVING_GC_THRESHOLD`): a large
    response holds hundreds of thousands of objects until it is sent, and at
    Python's default thresholds every few hundred allocations start a young
    collection that walks them, and every hundred of those an older one, so
    the collector took most of such a request's time (docs/benchmarks.md,
    "Mixed load on a real server").
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVING_GC_THRESHOLD)
    logger.debug("%d objects exempted from garbage collection", gc.get_freeze_count())


def create_app(
    settings: Settings | None = None,
    *,
    services: Redstring | None = None,
    stoppable_start: bool = False,
) -> Starlette:
    """The redstring ASGI app.

    With `services`, the app uses them as given (and never closes them); that
    is how tests and embedders inject stores. Without, the app opens the
    services `settings` describe when it starts and closes them when it stops,
    loading the demo dataset first when `settings.demo` is on, and checks in the
    background whether their stored vectors are of the configured provider and whether
    the provider answers (`checked_in_background`); a start that fails with an error its
    message explains (a store that does not answer) is logged in one line, `cannot
    start: ...`, and handed to the server without its traceback (`StartFailure`).

    `settings.federation` serves the Federation 2 subgraph schema on `/graphql`
    instead of the plain one; `settings.graphiql_assets` says where GraphiQL's
    files come from (`local` adds the `/graphiql/...` route that serves them).
    `settings.blas_threads` (when not 0) caps numpy's BLAS threads for the whole
    process when the app starts; `settings.gc_freeze` exempts everything alive once
    the app has started (the in-memory stores' data included) from the cyclic
    garbage collector (`freeze_startup_heap`). `settings.auth` picks how the callers of
    `/graphql` operations authenticate (`build_authenticator`; `InvalidInputError` for
    settings it cannot honour); every other route needs no credentials. Bookmarks are
    sealed with `settings.bookmark_secret`, else with the key `serve` handed its workers,
    else with a key of this app's own (`BookmarkSeal.for_server`).

    With `stoppable_start` (`serve` and its workers, under uvicorn), SIGTERM or Ctrl-C
    while the services open (Neo4j waited for, the demo loaded) stops their opening,
    closes what it opened, and lets the app start without services, for the server
    to stop at once (`stopped_by_signal`; docs/adr/0015).

    Each app counts its own metrics (`Metrics`, served on `/metrics`): the services,
    injected or opened, are used `observed` by them; every request gets a request id
    and a log line (`AccessLog`).
    """
    settings = settings or Settings()
    metrics = Metrics()
    holder = _OpenClient(None if services is None else services.observed(metrics))
    start_failure = StartFailure()
    authenticator = build_authenticator(settings)
    readiness = Readiness(holder, settings.readiness_timeout)
    limits = settings.limits()
    schema = build_schema(
        limits, federation=settings.federation, introspection=settings.introspection
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with serving():
                try:
                    yield
                finally:
                    readiness.cancel()  # before the services close under a warm-up
        finally:
            schema.repeated_errors.flush()  # the count of lines left out, not lost
            metrics.process_ended()

    @contextlib.asynccontextmanager
    async def serving() -> AsyncIterator[None]:
        if settings.auth is AuthMode.NONE:
            logger.warning(NO_AUTH_WARNING, settings.host)
        if settings.blas_threads:
            # Process-wide, for whatever numpy code in the process calls BLAS (a custom
            # provider's): idle BLAS threads spin on the cores the event loop needs. The
            # in-memory stores call no BLAS (docs/adr/0008).
            threadpool_limits(limits=settings.blas_threads, user_api="blas")
        if holder.services is not None:
            if settings.gc_freeze:
                freeze_startup_heap()
            yield
            return
        try:
            if stoppable_start:
                opened = await stopped_by_signal(opened_with_demo())
            else:
                opened = await opened_with_demo()
        except StartStopped as stop:
            # uvicorn, which took the signal too, stops the server at once, not serving.
            logger.info("start stopped by %s: the server stops without serving", stop.signal_name)
            yield
            return
        except SAID_FAILURES as exc:
            start_failure.say(exc)
            raise
        except Exception as exc:  # its traceback is uvicorn's to log; `serve` exits 1
            start_failure.note(exc)
            raise
        try:
            holder.services = opened.observed(metrics)
            if settings.gc_freeze:
                freeze_startup_heap()
            async with checked_in_background(holder.services, metrics):
                yield
        finally:
            holder.services = None
            await opened.aclose()

    async def opened_with_demo() -> Redstring:
        # Its provider gives up within a request's deadline (a 503), not past it (a 504).
        opened = await open_client(settings, embedding_time_limit=limits.embedding_time)
        if not settings.demo:
            return opened
        try:
            count = await load_demo(opened)
        except BaseException:
            await opened.aclose()
            raise
        logger.info("demo dataset loaded: %d entities", count)
        return opened

    graphql = GraphQLEndpoint(
        schema,
        services=holder,
        limits=limits,
        graphiql=graphiql_page(settings.graphiql_assets) if settings.graphiql else None,
        authenticator=authenticator,
        bookmark_seal=BookmarkSeal.for_server(settings.bookmark_secret_value()),
    )
    routes = [
        Route("/graphql", graphql, methods=list(GRAPHQL_METHODS)),
        Route("/healthz", healthz_endpoint(settings.auth.value), methods=["GET"]),
        Route("/readyz", readiness.respond, methods=["GET"]),
        Route("/metrics", metrics.endpoint, methods=["GET"]),
        *landing_routes(),
    ]
    if settings.graphiql and settings.graphiql_assets is AssetSource.LOCAL:
        routes.append(asset_route())
    return _ObservedStarlette(
        metrics,
        start_failure,
        # Without authentication (by default, not asked for) on a loopback address, no
        # page of another site may reach the server by a DNS name of its own
        # (docs/security.md); `REDSTRING_AUTH=none` said outright is taken at its word.
        loopback_only=settings.auth is AuthMode.NONE
        and "auth" not in settings.model_fields_set
        and is_loopback_name(settings.host),
        routes=routes,
        lifespan=lifespan,
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=cors_middleware(settings.cors_origins),
    )


@contextlib.asynccontextmanager
async def checked_in_background(services: Redstring, metrics: Metrics) -> AsyncIterator[None]:
    """While the app serves, check the stored vectors' provenance (`log_vector_provenance`)
    and whether the embedding provider answers (`log_embedding_check`, its outcome set in
    `metrics`), so that a slow or unanswering store or provider delays nothing; a check
    still running when the app stops is cancelled, before the services close."""

    async def embedding_checked() -> None:
        metrics.embedding_checked(await log_embedding_check(services))

    checks = [
        asyncio.create_task(log_vector_provenance(services)),
        asyncio.create_task(embedding_checked()),
    ]
    try:
        yield
    finally:
        for check in checks:
            check.cancel()
        await asyncio.wait(checks)  # their end, not their cancellation: ours would be lost


def app_from_environment() -> Starlette:
    """An app configured by the environment alone: uvicorn's factory for several workers."""
    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings, stoppable_start=True)
