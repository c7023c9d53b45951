"""What every response of the server carries, and whom a server without authentication
answers.

`SecurityHeaders`: no response is sniffed as another type, framed by another page, or
kept by a cache (a result holds a tenant's data), unless a route says otherwise (the
GraphiQL assets and the favicon set their own `Cache-Control`).

`LoopbackHostsOnly`: a server with `REDSTRING_AUTH=none` on a loopback address (what
`make serve` runs) answers only requests whose `Host` is a loopback name. Without it,
any web page its user opens could reach it through DNS rebinding: a name of the page's
own that resolves to 127.0.0.1 makes the browser send the page's requests to the
server, as same-origin ones, and read the answers.
"""

from __future__ import annotations

import ipaddress
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.refusals import refusal_response

# Also in the 408 a connection gets when its head is late (`connections.refusal_response`).
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"cache-control", b"no-store"),
)


class SecurityHeaders:
    """Adds `SECURITY_HEADERS` to every HTTP response, each unless the response has it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [
                    (name, value) for name, value in SECURITY_HEADERS if name not in present
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def is_loopback_name(host: str) -> bool:
    """Whether `host` (a name or an address, without port) names this machine only:
    `localhost` and the names under it, or a loopback address."""
    name = host.strip().rstrip(".").lower().removeprefix("[").removesuffix("]")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


# A `Host` header's value (RFC 9110 section 7.2, RFC 3986 section 3.2.2): an address in
# brackets or a name of the characters a registered name may hold, then an optional port
# of digits. Nothing else is read as a host: `127.0.0.1:80@evil.test` is no loopback name.
_HOST = re.compile(r"(\[[0-9A-Za-z:.%]*\]|[0-9A-Za-z._~!$&'()*+,;=%-]*)(?::[0-9]*)?")


def _host_name(header: str) -> str | None:
    """The name of a `Host` header, without its port (`[::1]:8000` is `[::1]`); None
    when the header is no host and port."""
    matched = _HOST.fullmatch(header)
    return None if matched is None else matched.group(1)


def _foreign_host(scope: Scope) -> str | None:
    """The request's `Host` (its several, joined), unless it is one loopback name with
    an optional port of digits; None for that, and for a request without `Host`."""
    hosts = [value.decode("latin-1") for name, value in scope["headers"] if name == b"host"]
    if not hosts:
        return None
    if len(hosts) == 1 and is_loopback_name(_host_name(hosts[0]) or ""):
        return None
    return ", ".join(hosts)


class LoopbackHostsOnly:
    """Refuses (400, `BAD_REQUEST`) a request whose `Host` is no loopback name (with an
    optional port of digits), or that has more than one `Host`; one without a `Host`
    (HTTP/1.0, which no browser sends) is let through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            named = _foreign_host(scope)
            if named is not None:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                refused = RequestRefusedError(
                    400,
                    ErrorCode.BAD_REQUEST,
                    f"this server answers requests for a loopback name only, not {named!r}: "
                    "it has no authentication (REDSTRING_AUTH=none), so no page of another "
                    "site may reach it by a name of its own (docs/security.md)",
                )
                await refusal_response(refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)
