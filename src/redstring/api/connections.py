"""Connections that do not send a request's head in time, or send one too long, are
closed (docs/security.md, "Limits").

uvicorn bounds the idle time after a response (`timeout_keep_alive`) but not the time
before a request's head is complete: a connection that sends nothing, or a head one
byte at a time, is held for as long as the client likes, and enough of them take every
file descriptor the process has (a slow-headers attack). The request deadline
(`REDSTRING_REQUEST_TIMEOUT`) only starts with a complete head, when the app is called.

`HeadDeadline` is a mixin over uvicorn's HTTP protocols (`HttpToolsWithHeadLimits`,
which `serve` runs, and `H11WithHeadDeadline`): a connection has `head_timeout`
seconds from its opening, and from the first byte after a response, to complete a
request's head; at the deadline it is closed, after a 408 with the API's error body
and headers, and an access line, when part of a head came (not the rest of a body its
request was answered without).
A request whose head came is never cut by it: its body and its work are the request
deadline's.

uvicorn's httptools protocol bounds no head's size either: llhttp takes any, and both
httptools and uvicorn gather a long value (a header, a URL) by `bytes +=` on the event
loop, so a 64 MB header took the loop for seconds at a time, and a head of a million
short headers reached the app. `HeadSizeCap`, over the httptools protocol
(`HttpToolsWithHeadLimits`, which `serve` runs), counts a head's bytes as they come and
answers 431 (the same way as the 408) to one longer than `max_head_bytes`, then closes
the connection. (h11 has its own cap, uvicorn's `h11_max_incomplete_event_size`.)
A chunked body's trailer fields are a second head, gathered the same way: so the bytes
of a body that are not its data (chunk sizes, extensions, trailers) count against the
same cap from the last data before them.

A 408 or 431 carries the CORS headers the app's middleware would give the request's
`Origin` (`redstring.api.cors.cors_headers`), when that header came before the head was
cut and the parser told it: httptools tells a header once the next line begins (a line
may continue the one before), h11 none before the head is whole, so over h11 a 408
carries none.

The timeout travels in `REDSTRING_HEADER_TIMEOUT` (`ENVIRONMENT_KEY`), the cap in
`REDSTRING_MAX_HEADER_BYTES` (`MAX_HEAD_BYTES_KEY`) and the origins in
`REDSTRING_CORS_ORIGINS` (`CORS_ORIGINS_KEY`), which `serve` sets: worker processes
build their protocol from uvicorn's configuration, which has no room for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from redstring.api.access_log import log_access
from redstring.api.cors import cors_headers
from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.protections import SECURITY_HEADERS
from redstring.api.request_record import (
    REQUEST_ID_HEADER,
    note_error_codes,
    opened_record,
    request_id_from,
)
from redstring.api.settings import Settings, origins_listed

logger = logging.getLogger("redstring.api")

ENVIRONMENT_KEY = "REDSTRING_HEADER_TIMEOUT"
DEFAULT_HEAD_TIMEOUT: float = Settings.model_fields["header_timeout"].default
MAX_HEAD_BYTES_KEY = "REDSTRING_MAX_HEADER_BYTES"
DEFAULT_MAX_HEAD_BYTES: int = Settings.model_fields["max_header_bytes"].default
CORS_ORIGINS_KEY = "REDSTRING_CORS_ORIGINS"
# The method and path of the access line of a request whose head did not come whole.
UNKNOWN = "-"


def head_timeout_from_environment() -> float:
    """The head timeout `serve` exported, or the default when none was."""
    value = os.environ.get(ENVIRONMENT_KEY)
    return float(value) if value else DEFAULT_HEAD_TIMEOUT


def max_head_bytes_from_environment() -> int:
    """The head cap `serve` exported, or the default when none was."""
    value = os.environ.get(MAX_HEAD_BYTES_KEY)
    return int(value) if value else DEFAULT_MAX_HEAD_BYTES


def cors_origins_from_environment() -> tuple[str, ...]:
    """The origins `serve` exported (`Settings.cors_origins`, comma-separated), or none."""
    return origins_listed(os.environ.get(CORS_ORIGINS_KEY, ""))


def head_late(timeout: float) -> RequestRefusedError:
    """The 408 of a connection whose head did not complete in `timeout` seconds."""
    return RequestRefusedError(
        HTTPStatus.REQUEST_TIMEOUT,
        ErrorCode.REQUEST_TIMEOUT,
        f"The request's head did not arrive within {timeout:g} s",
    )


def head_too_long(cap: int, *, trailer: bool = False) -> RequestRefusedError:
    """The 431 of a connection whose request's head, or its chunked body's trailer
    (`trailer`), passed `cap` bytes."""
    what = (
        "The request's trailer (the chunk framing and fields after its body's last bytes)"
        if trailer
        else "The request's head (its line and headers)"
    )
    return RequestRefusedError(
        HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
        ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE,
        f"{what} is longer than {cap} bytes",
    )


@contextlib.contextmanager
def refusal_written(
    transport: asyncio.WriteTransport,
    refused: RequestRefusedError,
    began: float,
    server_headers: Iterable[tuple[bytes, bytes]],
    origin: bytes | None = None,
) -> Iterator[None]:
    """`refused` written whole on `transport` (`refusal_response`) under a new request id,
    with the CORS headers the app gives a request from `origin` (its `Origin` header, if
    it came), and with the access line every request gets: its method and path are `-`,
    as its head did not come whole, its time from `began` (`time.perf_counter`). What
    the block logs carries the same id. Not counted in the metrics, which count
    `/graphql`'s requests."""
    shown_origin = None if origin is None else origin.decode("latin-1")
    headers = [*server_headers, *cors_headers(cors_origins_from_environment(), shown_origin)]
    with opened_record(request_id_from(None)) as record:
        note_error_codes([refused.code])
        transport.write(refusal_response(refused, record.request_id, headers))
        seconds = time.perf_counter() - began
        log_access(UNKNOWN, UNKNOWN, HTTPStatus(refused.status), seconds, record)
        yield


def refusal_response(
    refused: RequestRefusedError,
    request_id: str,
    server_headers: Iterable[tuple[bytes, bytes]] = (),
) -> bytes:
    """A whole response, written by the connection itself, to a request that never
    reached the app: `refused`'s status and error body, the headers uvicorn gives every
    response (`server_headers`: `date`, `server`; and CORS's), then what the app's middleware gives
    every one of its own (`X-Request-Id`, the security headers), and `connection: close`."""
    status = HTTPStatus(refused.status)
    body = json.dumps(refused.body()).encode()
    headers = [
        *server_headers,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        (REQUEST_ID_HEADER.encode(), request_id.encode()),
        *SECURITY_HEADERS,
    ]
    status_line = f"HTTP/1.1 {status.value} {status.phrase}".encode()
    lines = [status_line, *(name + b": " + value for name, value in headers)]
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
    # The `Origin` header of the head being received, when the protocol's parser told it
    # (`HeadSizeCap` records it; h11 tells no header before the head is whole).
    head_origin: bytes | None = None

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
        """The 408 (`refusal_written`: its id a new one, the client's header having
        perhaps not come whole either) and the connection's line."""
        refused = head_late(self.head_timeout)
        default_headers = self.server_state.default_headers
        began = self._head_started
        with refusal_written(self.transport, refused, began, default_headers, self.head_origin):
            self._log_closed()

    def _log_closed(self) -> None:
        logger.info(
            "closed a connection from %s: no complete request head within %g s",
            peer_of(self.transport),
            self.head_timeout,
        )


def peer_of(transport: asyncio.BaseTransport) -> str:
    """The client's address, for a log line."""
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) else "an unknown peer"


class HeadSizeCap:
    """Answers 431 and closes the connection when a request's head (its request line and
    headers) passes `max_head_bytes`, before the parser has gathered more than that.

    Mixed into uvicorn's httptools protocol, whose parser calls `on_message_begin` at a
    request's first byte, `on_headers_complete` at the end of its head and
    `on_message_complete` at the end of its body. The bytes of each read are counted
    against the head open at its start, the read cut where the head would pass the cap,
    so that a head ending in a read with a body after it is measured exactly: a body
    counts for nothing, and each request of a kept-alive or pipelined connection is
    measured from its own first byte. A pipelined head that begins in the middle of a
    read (after the end of the request before it) is counted from the next read, so it
    may pass the cap by less than one read before it is refused.

    A head refused while responses to the requests before it are still being sent is
    answered after them (`on_response_complete`); the connection reads no more.

    Trailer fields (after a chunked body) are gathered like headers, so the bytes of a
    chunked body that do not reach `on_body` (chunk sizes and extensions, the trailer)
    are counted too, from its last body bytes (`_framing`), and a read is cut where they
    would pass the cap (a `Content-Length` body is all data, and never cut). A read
    holding body bytes counts all its other bytes, those before its last body bytes
    included; the read in which the head ends counts none of them (the count starts with
    the next read), so a trailer may pass the cap by less than that read before it is
    refused. The refused request's app, whose body never ends, is told
    the client left: the 431 takes the place of its response when that has not started,
    follows it when it is complete (an app that answered without reading the body) or
    the responses before it when it is queued behind them; a response already being sent
    is cut and the connection closed without a 431.

    It also records the `Origin` header of the request being received (`head_origin`),
    from its head, not its trailer, until the request is whole, for the CORS headers of
    its 431 or of `HeadDeadline`'s 408.
    """

    transport: asyncio.Transport
    cycle: Any
    server_state: Any
    parser: Any
    pipeline: Any  # the requests whose head came, queued behind the one being answered
    head_origin: bytes | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_head_bytes = max_head_bytes_from_environment()
        self._head_size = 0  # bytes of the open head so far
        self._in_head = False  # a request began and its head is not whole
        self._in_request = False  # a request began and its body is not whole
        self._requests_begun = 0
        self._head_began = 0.0
        self._oversized = False
        self._framing = 0  # bytes of the open body not its data, since its last data
        self._body_in_piece = 0  # the open request's body bytes in the read being parsed
        self._body_seen = False  # whether the read being parsed held any of them
        self._refused_in_body: Any = None  # the cycle of a request refused for its trailer
        self._chunked = False  # the open request's body is framed (Transfer-Encoding)

    def on_message_begin(self) -> None:
        self._requests_begun += 1
        self._in_head = self._in_request = True
        self._head_began = time.perf_counter()
        self._body_in_piece, self._body_seen = 0, False
        self._chunked = False
        self.head_origin = None
        super().on_message_begin()  # type: ignore[misc]

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._in_head:
            lowered = name.lower()
            if lowered == b"transfer-encoding":
                # llhttp frames a body by its last coding, which must be `chunked`; one
                # named before it (`gzip, chunked`) is refused by the endpoint.
                self._chunked = True
            elif lowered == b"origin" and self.head_origin is None:
                self.head_origin = value  # the first, as the app's middleware reads it
        super().on_header(name, value)  # type: ignore[misc]

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_size = self._framing = 0
        super().on_headers_complete()  # type: ignore[misc]

    def on_body(self, body: bytes) -> None:
        self._body_in_piece += len(body)
        self._body_seen = True
        super().on_body(body)  # type: ignore[misc]

    def on_message_complete(self) -> None:
        self._in_request = False
        self.head_origin = None
        super().on_message_complete()  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        if self._oversized:  # the rest of a head refused: never parsed
            return
        while data:
            if self._in_head and self._head_size >= self.max_head_bytes:
                self._refuse()
                return
            framed = self._in_request and not self._in_head and self._chunked
            if framed and self._framing >= self.max_head_bytes:
                self._refuse_trailer()
                return
            head_may_grow = self._in_head or not self._in_request
            room = self.max_head_bytes - (self._framing if framed else self._head_size)
            if (head_may_grow or framed) and len(data) > room:
                piece, data = data[:room], data[room:]
            else:
                piece, data = data, b""
            was_in_head, was_in_request = self._in_head, self._in_request
            begun = self._requests_begun
            self._body_in_piece, self._body_seen = 0, False
            super().data_received(piece)  # type: ignore[misc]
            protocol: object = self.transport.get_protocol()
            if (
                self.transport.is_closing()  # refused by the parser, say
                or protocol is not self  # a WebSocket's now
                or self.parser.should_upgrade()  # uvicorn reads no more of the read either
            ):
                return
            new_requests = self._requests_begun - begun
            if not self._in_head:
                if self._in_request and self._chunked:
                    in_body_throughout = new_requests == 0 and was_in_request and not was_in_head
                    self._count_framing(len(piece), in_body_throughout)
                continue
            if new_requests == 0 and was_in_head:
                self._head_size += len(piece)
            elif new_requests == 1 and not was_in_request:
                self._head_size = len(piece)  # the head began the piece
            # Else the head began after another request's end in this piece: counted
            # from the next.

    def _count_framing(self, size: int, in_body_throughout: bool) -> None:
        """Counts the bytes of a read of `size` bytes that left a request in its body."""
        if not in_body_throughout:  # its head ended in the read: counted from the next
            self._framing = 0
        elif self._body_seen:
            self._framing = size - self._body_in_piece
        else:
            self._framing += size

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)  # super() starts the next of them
        super().on_response_complete()  # type: ignore[misc]
        if not self._oversized or self.transport.is_closing():
            return
        if self._refused_in_body is not None:
            if not queued:
                self._answer_oversized()
        elif self._answers_sent():
            self._answer_oversized()

    def _answers_sent(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _refuse_trailer(self) -> None:
        """Refuses the request whose body is being read: its app (running, or queued
        behind others in `pipeline`) is told the client left, and writes nothing more."""
        self._oversized = True
        self.transport.pause_reading()
        cycle = self._refused_in_body = self.cycle
        queued = [entry for entry in self.pipeline if entry[0] is cycle]
        for entry in queued:
            self.pipeline.remove(entry)
        started_not_done = cycle.response_started and not cycle.response_complete
        if not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        if queued:  # answered after the responses before it
            return
        if started_not_done:  # half a response sent: no room for a 431
            self._log_refused()
            self.transport.close()
            return
        self._answer_oversized()

    def _refuse(self) -> None:
        self._oversized = True
        self.transport.pause_reading()
        if self._answers_sent():
            self._answer_oversized()

    def _answer_oversized(self) -> None:
        """The 431, its access line (method and path `-`, as for the 408: the head did not
        come whole) and the connection's line; then the connection is closed."""
        refused = head_too_long(self.max_head_bytes, trailer=self._refused_in_body is not None)
        default_headers = self.server_state.default_headers
        began = self._head_began
        with refusal_written(self.transport, refused, began, default_headers, self.head_origin):
            self._log_refused()
        self.transport.close()

    def _log_refused(self) -> None:
        logger.info(
            "closed a connection from %s: a request head over %d bytes",
            peer_of(self.transport),
            self.max_head_bytes,
        )


class HttpToolsWithHeadLimits(HeadSizeCap, HeadDeadline, HttpToolsProtocol):
    """uvicorn's httptools protocol (the one its `auto` picks, httptools coming with
    `uvicorn[standard]`) with `HeadSizeCap` and `HeadDeadline`: the protocol `serve`
    runs."""


class H11WithHeadDeadline(HeadDeadline, H11Protocol):
    """uvicorn's h11 protocol with `HeadDeadline`."""
