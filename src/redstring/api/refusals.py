"""How the HTTP layer answers a request it does not serve: with the API's one error shape.

Every refusal, ours or a framework's (Strawberry's transport checks,
Starlette's 404 and 405, an exception nothing else caught), becomes a
`RequestRefusedError` and is answered as a GraphQL error body with its
status and `extensions.code` (docs/security.md, "One error contract").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from cross_web import HTTPException as ViewHTTPException
from starlette.exceptions import HTTPException as RoutingHTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ExceptionHandler
from strawberry.schema.exceptions import InvalidOperationTypeError

from redstring.api.errors import (
    INTERNAL_MESSAGE,
    ErrorCode,
    RequestRefusedError,
    code_for_status,
)
from redstring.api.json_body import JSONBody
from redstring.api.request_record import note_error_codes

logger = logging.getLogger("redstring.api")

# What `/graphql` serves: HEAD as GET without its body (`GraphQLEndpoint`).
GRAPHQL_METHODS = ("GET", "HEAD", "POST")


def allow_header(methods: Iterable[str]) -> str:
    """An `Allow` value: `methods` in one order, whoever lists them (Starlette's route
    keeps a set)."""
    return ", ".join(sorted(set(methods)))


def refusal_response(refused: RequestRefusedError) -> JSONBody:
    """`refused` as an HTTP response: its status, headers and GraphQL error body, which
    may echo the client's text (`JSONBody` writes any of it).

    Its code goes into the request's access log line (INFO: a refusal is the
    client's matter, not the operator's); the message only at DEBUG.
    """
    note_error_codes([refused.code.value])
    logger.debug("request refused: %d %s: %s", refused.status, refused.code.value, refused.message)
    return JSONBody(refused.body(), status_code=refused.status, headers=refused.headers)


def internal_error() -> RequestRefusedError:
    """The answer to an exception nothing expected: 500, its message masked."""
    return RequestRefusedError(500, ErrorCode.INTERNAL_SERVER_ERROR, INTERNAL_MESSAGE)


def view_refusal(exc: ViewHTTPException, method: str) -> RequestRefusedError:
    """Strawberry's own transport refusal, coded. A mutation over GET is 405 with
    `Allow: POST`, as the GraphQL-over-HTTP specification asks."""
    if method == "GET" and isinstance(exc.__cause__, InvalidOperationTypeError):
        return RequestRefusedError(
            405, ErrorCode.METHOD_NOT_ALLOWED, exc.reason, headers={"Allow": "POST"}
        )
    headers = {"Allow": allow_header(GRAPHQL_METHODS)} if exc.status_code == 405 else None
    return RequestRefusedError(
        exc.status_code, code_for_status(exc.status_code), exc.reason, headers=headers
    )


async def _routing_refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RoutingHTTPException)
    if exc.status_code in {204, 304}:  # no body allowed
        return Response(status_code=exc.status_code, headers=exc.headers)
    headers = dict(exc.headers or {})
    if "Allow" in headers:  # a 405: the methods the path serves
        headers["Allow"] = allow_header(headers["Allow"].split(", "))
    message = exc.detail
    if exc.status_code == 404 and (meant := _route_path(request, request.url.path)):
        message = f"{exc.detail}: the path is {meant}"
    refused = RequestRefusedError(
        exc.status_code, code_for_status(exc.status_code), message, headers=headers
    )
    return refusal_response(refused)


def _route_path(request: Request, path: str) -> str | None:
    """The path of a route of the app that `path` is with a slash more or less
    (`/graphql/` for `/graphql`), if any."""
    other = path.removesuffix("/") if path.endswith("/") else f"{path}/"
    paths = {getattr(route, "path", None) for route in request.app.router.routes}
    return other if other != path and other in paths else None


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestRefusedError)
    return refusal_response(exc)


async def _unexpected(request: Request, exc: Exception) -> Response:
    # Not logged here: Starlette raises the exception again after this answer, and
    # the server logs it, traceback included, once.
    return JSONBody(internal_error().body(), status_code=500)


EXCEPTION_HANDLERS: dict[type[Exception], ExceptionHandler] = {
    RoutingHTTPException: _routing_refusal,
    RequestRefusedError: _refused,
    Exception: _unexpected,
}
"""Starlette's exception handlers for the whole app: an unknown path (404), a method a
route does not serve (405, with `Allow`), a `RequestRefusedError` from a route other
than `/graphql`, and an exception nothing else caught (500)."""
