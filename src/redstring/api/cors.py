"""Which browser pages may read the API's answers (CORS): one configuration, applied by
the app's middleware (`cors_middleware`) and, through the same middleware's rule, to
the refusals a connection writes itself before any request reaches the app
(`cors_headers`: the 408 and 431 of `redstring.api.connections`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from redstring.api import bookmarks
from redstring.api.errors import RequestRefusedError, code_for_status
from redstring.api.refusals import refusal_response
from redstring.api.request_record import REQUEST_ID_HEADER
from redstring.api.retry_after import RETRY_AFTER_HEADER


def _options(origins: Sequence[str]) -> dict[str, Any]:
    return {
        "allow_origins": list(origins),
        "allow_methods": ["GET", "POST"],
        "allow_headers": ["authorization", "content-type", bookmarks.HEADER, REQUEST_ID_HEADER],
        "expose_headers": [bookmarks.HEADER, REQUEST_ID_HEADER, RETRY_AFTER_HEADER],
        "max_age": 600,
    }


def cors_middleware(origins: Sequence[str]) -> list[Middleware]:
    """Starlette's CORS middleware for `origins` (none: no CORS headers at all, so no
    browser page of another origin may call the API): `GET` and `POST` with the
    headers the API reads, its bookmark, request id and a 503's `Retry-After` exposed, a
    preflight kept ten minutes. Credentials are headers (`Authorization`), never cookies.
    A preflight asking for private network access is refused (Starlette's
    `allow_private_network` left off; docs/security.md)."""
    if not origins:
        return []
    return [Middleware(_CodedCORSMiddleware, **_options(origins))]


class _CodedCORSMiddleware(CORSMiddleware):
    """Starlette's, but a preflight it refuses (an origin, method or header not allowed)
    is answered as the API answers every refusal: a coded error body, not plain text."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        kept = {
            name: value
            for name, value in response.headers.items()
            if name not in ("content-type", "content-length")
        }
        reason = bytes(response.body).decode()
        status = response.status_code
        return refusal_response(
            RequestRefusedError(status, code_for_status(status), reason, headers=kept)
        )


async def _answered(scope: Scope, receive: Receive, send: Send) -> None:
    """The app behind the middleware `cors_headers` asks: a bare response's start."""
    await send({"type": "http.response.start", "status": 200, "headers": []})


async def _nothing_received() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


@lru_cache(maxsize=4)
def _middleware(origins: tuple[str, ...]) -> _CodedCORSMiddleware:
    return _CodedCORSMiddleware(_answered, **_options(origins))


def cors_headers(origins: Sequence[str], origin: str | None) -> list[tuple[bytes, bytes]]:
    """The CORS headers the app's middleware gives a response to a request from `origin`
    (its `Origin` header; None when it sent none), with `origins` allowed: none when
    `origins` is empty, as the app then has no such middleware.

    The middleware is run as the app runs it, an ASGI app around one that answers, so
    the rule (which origins, which headers exposed, `Vary`, a request without `Origin`)
    is Starlette's here as in the app, in whichever version is installed. It awaits
    nothing but the answer's start, so it is run to its end at once, without an event
    loop."""
    if not origins:
        return []
    given = [] if origin is None else [(b"origin", origin.encode("latin-1"))]
    scope: Scope = {"type": "http", "method": "GET", "path": "/", "headers": given}
    sent: list[Message] = []

    async def keep(message: Message) -> None:
        sent.append(message)

    running = _middleware(tuple(origins))(scope, _nothing_received, keep)
    try:
        running.send(None)
    except StopIteration:
        return [header for message in sent for header in message.get("headers", [])]
    running.close()
    raise RuntimeError("CORSMiddleware waited on something: its headers are unknown")
