"""`AccessLog`: the ASGI middleware that gives each HTTP request an id, one log line and
its metrics.

It wraps the whole app, Starlette's error middleware included, so every
response carries `X-Request-Id` (a 404, a refusal, a 500) and every request is
logged once, on `redstring.api.access` at INFO. A pure ASGI middleware rather
than Starlette's `BaseHTTPMiddleware`, which would buffer streamed bodies and
run the app in another task, breaking cancellation and the request's context.
"""

from __future__ import annotations

import asyncio
import logging
import time
from http import HTTPStatus

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from redstring.api.errors import ErrorCode
from redstring.api.metrics import Metrics
from redstring.api.request_record import (
    REQUEST_ID_HEADER,
    RequestRecord,
    opened_record,
    request_id_from,
)

access_logger = logging.getLogger("redstring.api.access")

GRAPHQL_PATH = "/graphql"
MAX_LOGGED_PATH = 256
MAX_LOGGED_CALLER = 128
# nginx's status for a request the client gave up on before any response.
CLIENT_CLOSED = 499
CANCELLED = "cancelled"

# The code a response without a noted one is counted under, by HTTP status.
_CODE_OF_STATUS: dict[int, str] = {
    HTTPStatus.BAD_REQUEST: ErrorCode.BAD_REQUEST,
    HTTPStatus.UNAUTHORIZED: ErrorCode.UNAUTHENTICATED,
    HTTPStatus.FORBIDDEN: ErrorCode.FORBIDDEN,
    HTTPStatus.NOT_FOUND: "NOT_FOUND",
    HTTPStatus.METHOD_NOT_ALLOWED: "METHOD_NOT_ALLOWED",
    HTTPStatus.REQUEST_TIMEOUT: ErrorCode.REQUEST_TIMEOUT,
    HTTPStatus.GATEWAY_TIMEOUT: ErrorCode.REQUEST_TIMEOUT,
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: ErrorCode.PAYLOAD_TOO_LARGE,
    HTTPStatus.SERVICE_UNAVAILABLE: ErrorCode.SERVICE_UNAVAILABLE,
}


def outcome_of(status: int, error_codes: list[str]) -> str:
    """`ok`, or the first error code of the response; a failed response without a noted
    code is counted under the code its status implies, and a request cancelled
    before it answered (`CLIENT_CLOSED`) as `cancelled`."""
    if error_codes:
        return error_codes[0]
    if status == CLIENT_CLOSED:
        return CANCELLED
    if status < HTTPStatus.BAD_REQUEST:
        return "ok"
    if status >= HTTPStatus.INTERNAL_SERVER_ERROR:
        return _CODE_OF_STATUS.get(status, ErrorCode.INTERNAL_SERVER_ERROR)
    return _CODE_OF_STATUS.get(status, ErrorCode.BAD_REQUEST)


def loggable_path(path: str) -> str:
    """`path` safe for a text log line: control and non-ASCII characters escaped, cut
    to `MAX_LOGGED_PATH` characters (a path is the client's text)."""
    return _loggable(path, MAX_LOGGED_PATH)


def _loggable(text: str, limit: int) -> str:
    """`text` with control and non-ASCII characters escaped, cut to `limit` characters
    (a cut may split an escape; a caller is cut before it is escaped, at most ten
    characters each, so that its escapes stay whole)."""
    return text.encode("unicode_escape").decode("ascii")[:limit]


class AccessLog:
    """Request id, log line and metrics for each HTTP request of `app`."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(Headers(scope=scope).get(REQUEST_ID_HEADER))
        graphql = scope["path"] == GRAPHQL_PATH
        status = 0
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": list(message.get("headers", []))}
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        if graphql:
            self.metrics.in_flight.inc()
        with opened_record(request_id) as record:
            try:
                await self.app(scope, receive, send_with_id)
            except asyncio.CancelledError:
                status = status or CLIENT_CLOSED
                raise
            finally:
                status = status or HTTPStatus.INTERNAL_SERVER_ERROR.value
                seconds = time.perf_counter() - started
                if graphql:
                    self.metrics.in_flight.dec()
                self._finish(scope, record, status, seconds, graphql=graphql)

    def _finish(
        self, scope: Scope, record: RequestRecord, status: int, seconds: float, *, graphql: bool
    ) -> None:
        path = loggable_path(scope["path"])
        outcome = log_access(scope["method"], path, status, seconds, record)
        if graphql:
            self.metrics.request(record.operation, outcome, seconds)


def log_access(method: str, path: str, status: int, seconds: float, record: RequestRecord) -> str:
    """Logs the access line of one request (`path` already `loggable_path`), and returns
    its outcome (`outcome_of`)."""
    outcome = outcome_of(status, record.error_codes)
    access_logger.info(
        "%s %s %d",
        method,
        path,
        status,
        # A field without a value is left out (docs/security.md: "absent when none").
        extra={
            name: value
            for name, value in {
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(seconds * 1000, 3),
                "request_id": record.request_id,
                "operation": record.operation,
                "tenant": None if record.tenant is None else str(record.tenant),
                "caller": None
                if record.caller is None
                else _loggable(record.caller[:MAX_LOGGED_CALLER], 10 * MAX_LOGGED_CALLER),
                "outcome": outcome,
                "error_codes": list(record.error_codes),
            }.items()
            if value is not None
        },
    )
    return outcome
