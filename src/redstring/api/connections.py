"""Connections that do not send a request in time are closed (docs/security.md, "Limits").

uvicorn bounds the idle time after a response (`timeout_keep_alive`) but not the time
before a request's head is complete: a connection that sends nothing, or a head one
byte at a time, is held for as long as the client likes, and enough of them take every
file descriptor the process has (a slow-headers attack). The request deadline
(`REDSTRING_REQUEST_TIMEOUT`) only starts with a complete head, when the app is called.

`HeadDeadline` is a mixin over uvicorn's HTTP protocols (`HttpToolsWithHeadDeadline`,
which `serve` runs, and `H11WithHeadDeadline`): a connection has `head_timeout`
seconds from its opening, and from the first byte after a response, to complete a
request's head; at the deadline it is closed, after a 408 with the API's error body
and headers, and an access line, when part of a head came (not the rest of a body its
request was answered without).
A request whose head came is never cut by it: its body and its work are the request
deadline's.

The timeout travels in `REDSTRING_HEADER_TIMEOUT` (`ENVIRONMENT_KEY`), which `serve`
sets: worker processes build their protocol from uvicorn's configuration, which has
no room for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from redstring.api.access_log import log_access
from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.protections import SECURITY_HEADERS
from redstring.api.request_record import (
    REQUEST_ID_HEADER,
    note_error_codes,
    opened_record,
    request_id_from,
)
from redstring.api.settings import Settings

logger = logging.getLogger("redstring.api")

ENVIRONMENT_KEY = "REDSTRING_HEADER_TIMEOUT"
DEFAULT_HEAD_TIMEOUT: float = Settings.model_fields["header_timeout"].default
# The method and path of the access line of a request whose head did not come whole.
UNKNOWN = "-"


def head_timeout_from_environment() -> float:
    """The head timeout `serve` exported, or the default when none was."""
    value = os.environ.get(ENVIRONMENT_KEY)
    return float(value) if value else DEFAULT_HEAD_TIMEOUT


def timeout_response(
    timeout: float, request_id: str, server_headers: Iterable[tuple[bytes, bytes]] = ()
) -> bytes:
    """The 408 sent before closing a connection whose head did not complete in time: the
    headers uvicorn gives every response (`server_headers`: `date`, `server`), then
    what the app's middleware gives every one of its own (`X-Request-Id`, the security
    headers)."""
    refused = RequestRefusedError(
        408,
        ErrorCode.REQUEST_TIMEOUT,
        f"The request's head did not arrive within {timeout:g} s",
    )
    body = json.dumps(refused.body()).encode()
    headers = [
        *server_headers,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        (REQUEST_ID_HEADER.encode(), request_id.encode()),
        *SECURITY_HEADERS,
    ]
    lines = [b"HTTP/1.1 408 Request Timeout", *(name + b": " + value for name, value in headers)]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class HeadDeadline:
    """Closes the connection when a request's head has not come `head_timeout` seconds
    after the connection opened, or after the first byte following a response.

    Mixed into a uvicorn HTTP protocol, whose `cycle` is the request being served (None
    before the first) and whose `data_received` starts a request once its head is in.
    """

    transport: asyncio.Transport
    cycle: Any
    server_state: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_timeout = head_timeout_from_environment()
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = False
        self._head_started = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self._between_requests():
            self._arm_head_timer()
        if self._head_timer is not None:
            self._head_bytes = True
        served = self.cycle
        super().data_received(data)  # type: ignore[misc]
        if self.cycle is not served:  # a head came: a request began
            self._disarm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def _between_requests(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _arm_head_timer(self) -> None:
        loop = asyncio.get_running_loop()
        self._head_bytes = False
        self._head_started = time.perf_counter()
        self._head_timer = loop.call_later(self.head_timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        # A WebSocket upgrade hands the transport to another protocol: no longer ours.
        protocol: object = self.transport.get_protocol()
        upgraded = protocol is not self
        if upgraded or self.transport.is_closing() or not self._between_requests():
            return
        # The bytes after a response may be the rest of its request's body (one the app
        # answered before reading it all): no head came, and no second answer is due.
        if self._head_bytes and not (self.cycle is not None and self.cycle.more_body):
            self._answer_timeout()
        else:
            self._log_closed()
        self.transport.close()

    def _answer_timeout(self) -> None:
        """The 408, and the access line every request gets: its method and path are
        `-`, as its head did not come whole; its id is a new one, the client's header
        having perhaps not come whole either. Not counted in the metrics, which count
        `/graphql`'s requests."""
        with opened_record(request_id_from(None)) as record:
            note_error_codes([ErrorCode.REQUEST_TIMEOUT])
            response = timeout_response(
                self.head_timeout, record.request_id, self.server_state.default_headers
            )
            self.transport.write(response)
            seconds = time.perf_counter() - self._head_started
            log_access(UNKNOWN, UNKNOWN, HTTPStatus.REQUEST_TIMEOUT, seconds, record)
            self._log_closed()

    def _log_closed(self) -> None:
        peer = self.transport.get_extra_info("peername")
        logger.info(
            "closed a connection from %s: no complete request head within %g s",
            peer[0] if isinstance(peer, tuple) else "an unknown peer",
            self.head_timeout,
        )


class HttpToolsWithHeadDeadline(HeadDeadline, HttpToolsProtocol):
    """uvicorn's httptools protocol (the one its `auto` picks, httptools coming with
    `uvicorn[standard]`) with `HeadDeadline`: the protocol `serve` runs."""


class H11WithHeadDeadline(HeadDeadline, H11Protocol):
    """uvicorn's h11 protocol with `HeadDeadline`."""
