"""Slow and idle connections are closed, and oversized heads refused
(`redstring.api.connections`, docs/security.md).

Each parser's protocol is served in this process by uvicorn on a loopback port, with a
head timeout of a fraction of a second and a head cap of a few KiB; the last tests run
`redstring serve` itself, to see the settings reach the server it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
import websockets

from redstring.api import connections, create_app
from redstring.api.settings import Settings
from tests.api.support import memory_services
from tests.processes import LoggedProcess, free_loopback_port, redstring_server

HEAD_TIMEOUT = 0.5
HEAD_CAP = 4096
HANG_GUARD = 10.0  # seconds: only fails a test that would otherwise hang
GRAPHQL_HEAD = (
    b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\n\r\n"
)
TYPENAME = b'{"query": "{ __typename }"}'
APP_ORIGIN = "http://app.test"  # the one origin whose pages may read the answers (CORS)


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers each request with its body, read whole (on `/stream`, after a first part of
    the answer sent before reading it); echoes each WebSocket message."""
    if scope["type"] == "websocket":
        while (message := await receive())["type"] != "websocket.disconnect":
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
            else:
                await send({"type": "websocket.send", "text": message.get("text")})
        return
    if scope["type"] != "http":
        return
    streaming = scope["path"] == "/stream"
    if streaming:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first part", "more_body": True})
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if streaming:
        await send({"type": "http.response.body", "body": body})
        return
    length = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": length})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(params=[connections.HttpToolsWithHeadLimits, connections.H11WithHeadDeadline])
def served(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, int]]:
    """`echo_app` behind one of the protocols, `HEAD_TIMEOUT` for a head, 5 s of keep-alive."""
    yield from serving_echo(request.param, monkeypatch)


@pytest.fixture
def served_capped(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, int]]:
    """`echo_app` behind the protocol `serve` runs, with heads capped at `HEAD_CAP` bytes
    (h11's own cap, `h11_max_incomplete_event_size`, is another's)."""
    yield from serving_echo(connections.HttpToolsWithHeadLimits, monkeypatch)


def serving_echo(protocol: type, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, int]]:
    monkeypatch.setenv(connections.ENVIRONMENT_KEY, str(HEAD_TIMEOUT))
    monkeypatch.setenv(connections.MAX_HEAD_BYTES_KEY, str(HEAD_CAP))
    monkeypatch.setenv(connections.CORS_ORIGINS_KEY, APP_ORIGIN)
    port = free_loopback_port()
    config = uvicorn.Config(
        echo_app, host="127.0.0.1", port=port, http=protocol, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    give_up = time.monotonic() + HANG_GUARD
    while not server.started:
        assert time.monotonic() < give_up, "the server did not start"
        time.sleep(0.01)
    try:
        yield "127.0.0.1", port
    finally:
        server.should_exit = True
        thread.join(timeout=HANG_GUARD)


def read_until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and the seconds that took."""
    started = time.monotonic()
    received = b""
    while True:
        try:
            data = sock.recv(1 << 16)
        except ConnectionResetError:
            break
        if not data:
            break
        received += data
    return received, time.monotonic() - started


def read_response(sock: socket.socket) -> bytes:
    """One response with a `content-length`, head and body."""
    received = b""
    while b"\r\n\r\n" not in received:
        data = sock.recv(1 << 16)
        assert data, f"closed after {received!r}"
        received += data
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        data = sock.recv(1 << 16)
        assert data, f"closed after {received!r}"
        body += data
    return head + b"\r\n\r\n" + body


def read_responses(sock: socket.socket, count: int) -> tuple[list[bytes], bytes]:
    """`count` responses with a `content-length` that may have come in one read
    (pipelined), and what came after them."""
    received = b""
    responses = []
    while len(responses) < count:
        head, found, rest = received.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length:")
            ),
            None,
        )
        if found and length is not None and len(rest) >= length:
            responses.append(head + found + rest[:length])
            received = rest[length:]
            continue
        data = sock.recv(1 << 16)
        assert data, f"closed after {responses!r} and {received!r}"
        received += data
    return responses, received


def response_headers(head: bytes) -> dict[str, str]:
    """A response head's headers by lower-case name (each name once)."""
    lines = head.decode("latin-1").split("\r\n")[1:]
    pairs = [line.split(":", 1) for line in lines]
    return {name.strip().lower(): value.strip() for name, value in pairs}


def refusal(received: bytes, status: bytes) -> tuple[dict[str, str], dict[str, Any]]:
    """The headers and the one error of a refusal the connection wrote, whose head begins
    with `status`."""
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(status)
    (error,) = json.loads(body)["errors"]
    return response_headers(head), error


def request(body: bytes = b"ping") -> bytes:
    return b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


def test_a_connection_that_sends_nothing_is_closed_without_an_answer(
    served: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    """No request came, so no access line: only the connection's."""
    caplog.set_level(logging.INFO, logger="redstring.api")
    with socket.create_connection(served, timeout=HANG_GUARD) as sock:
        received, took = read_until_closed(sock)
    assert received == b""
    assert HEAD_TIMEOUT * 0.8 <= took < HEAD_TIMEOUT + 2
    assert not [r for r in caplog.records if r.name == "redstring.api.access"]
    assert [r for r in caplog.records if r.getMessage().startswith("closed a connection")]


def test_an_unfinished_head_is_answered_408_with_the_error_body_then_closed(
    served: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    with socket.create_connection(served, timeout=HANG_GUARD) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: not-yet-")
        received, took = read_until_closed(sock)
    headers, error = refusal(received, b"HTTP/1.1 408 ")
    assert error["extensions"]["code"] == "REQUEST_TIMEOUT"
    assert f"{HEAD_TIMEOUT:g} s" in error["message"]
    assert took < HEAD_TIMEOUT + 2
    # What every response carries (docs/security.md), the server's `date` too.
    assert headers["connection"] == "close"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["content-security-policy"] == "frame-ancestors 'none'"
    assert headers["cache-control"] == "no-store"
    assert "date" in headers
    # A head cut short holds no id of the client's: the server makes one.
    request_id = headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    # One access line, as for every request.
    [access] = [r for r in caplog.records if r.name == "redstring.api.access"]
    assert access.getMessage() == "- - 408"
    assert access.__dict__["request_id"] == request_id
    assert access.__dict__["outcome"] == "REQUEST_TIMEOUT"
    assert access.__dict__["error_codes"] == ["REQUEST_TIMEOUT"]
    assert HEAD_TIMEOUT * 800 <= access.__dict__["duration_ms"] < (HEAD_TIMEOUT + 2) * 1000
    assert [r for r in caplog.records if r.getMessage().startswith("closed a connection")]


def test_a_head_sent_a_byte_at_a_time_is_cut_at_the_deadline_of_its_first_byte(
    served: tuple[str, int],
) -> None:
    """Bytes keep coming, but the deadline counts from the first: sending slowly does
    not buy time."""
    head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: " + b"a" * 100
    closed_after = None
    with socket.create_connection(served, timeout=HANG_GUARD) as sock:
        started = time.monotonic()
        try:
            for byte in head:
                sock.sendall(bytes([byte]))
                time.sleep(HEAD_TIMEOUT / 10)
        except (BrokenPipeError, ConnectionResetError):
            closed_after = time.monotonic() - started
        received, _ = read_until_closed(sock)
        closed_after = closed_after or time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408 ")
    assert closed_after < HEAD_TIMEOUT * 10 * 0.8


def test_a_slow_body_after_a_whole_head_is_not_cut(served: tuple[str, int]) -> None:
    """A request whose head came is the request deadline's, however long its body takes."""
    with socket.create_connection(served, timeout=HANG_GUARD) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: 4\r\n\r\npi")
        time.sleep(HEAD_TIMEOUT * 3)
        sock.sendall(b"ng")
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b"ping")


def test_the_next_request_on_a_kept_alive_connection_has_its_own_deadline(
    served: tuple[str, int],
) -> None:
    """Idle after a response is keep-alive's (5 s here), not the head deadline's; the
    next head's deadline starts at its first byte."""
    with socket.create_connection(served, timeout=HANG_GUARD) as sock:
        sock.sendall(request(b"one"))
        assert read_response(sock).endswith(b"one")
        time.sleep(HEAD_TIMEOUT * 3)
        sock.sendall(request(b"two"))
        assert read_response(sock).endswith(b"two")
        sock.sendall(b"POST / HTTP/1.1\r\n")
        received, took = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert took < HEAD_TIMEOUT + 2


async def test_a_websocket_outlives_the_head_deadline(served: tuple[str, int]) -> None:
    """An upgraded connection belongs to the WebSocket protocol, which the deadline
    leaves alone."""
    host, port = served
    async with websockets.connect(f"ws://{host}:{port}/") as socket_:
        await asyncio.sleep(HEAD_TIMEOUT * 3)
        await socket_.send("still here")
        assert await asyncio.wait_for(socket_.recv(), HANG_GUARD) == "still here"


# --- the size of a head ----------------------------------------------------------------


def head_of(size: int, *, shape: str = "header", body: bytes = b"") -> bytes:
    """A request whose head (request line, headers, blank line) is `size` bytes, padded
    with one long header, a long query string, or many short headers."""
    ending = b"content-length: %d\r\n\r\n" % len(body)
    if shape == "url":
        fixed = len(b"POST /?q= HTTP/1.1\r\nHost: 127.0.0.1\r\n" + ending)
        pad = b"a" * (size - fixed)
        return b"POST /?q=" + pad + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + ending + body
    start = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if shape == "headers":
        lines, rest = divmod(size - len(start + ending), len(b"x-a: b\r\n"))
        padding = b"x-a: b\r\n" * (lines - 1) + b"x-a: b" + b"b" * rest + b"\r\n"
        return start + padding + ending + body
    fixed = len(start + b"x-junk: \r\n" + ending)
    return start + b"x-junk: " + b"a" * (size - fixed) + b"\r\n" + ending + body


def test_head_of_builds_heads_of_the_size_asked() -> None:
    for shape in ("header", "url", "headers"):
        for size in (HEAD_CAP, HEAD_CAP + 1):
            sent = head_of(size, shape=shape, body=b"xyz")
            assert len(sent.partition(b"\r\n\r\n")[0]) + 4 == size
            assert sent.endswith(b"\r\n\r\nxyz")


@pytest.mark.parametrize("shape", ["header", "url", "headers"])
def test_a_head_over_the_cap_is_answered_431_with_the_error_body_then_closed(
    served_capped: tuple[str, int], caplog: pytest.LogCaptureFixture, shape: str
) -> None:
    """One byte over: the head is refused whole, whichever part of it is long."""
    caplog.set_level(logging.INFO, logger="redstring.api")
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(head_of(HEAD_CAP + 1, shape=shape))
        received, _ = read_until_closed(sock)
    headers, error = refusal(received, b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert error["extensions"]["code"] == "REQUEST_HEADER_FIELDS_TOO_LARGE"
    assert f"{HEAD_CAP} bytes" in error["message"]
    assert headers["connection"] == "close"
    assert headers["content-type"] == "application/json"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"
    assert "date" in headers
    request_id = headers["x-request-id"]
    [access] = [r for r in caplog.records if r.name == "redstring.api.access"]
    assert access.getMessage() == "- - 431"
    assert access.__dict__["request_id"] == request_id
    assert access.__dict__["outcome"] == "REQUEST_HEADER_FIELDS_TOO_LARGE"
    [closed] = [r for r in caplog.records if r.getMessage().startswith("closed a connection")]
    assert closed.getMessage() == (
        f"closed a connection from 127.0.0.1: a request head over {HEAD_CAP} bytes"
    )


@pytest.mark.parametrize("shape", ["header", "url", "headers"])
def test_a_head_of_exactly_the_cap_is_served(served_capped: tuple[str, int], shape: str) -> None:
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(head_of(HEAD_CAP, shape=shape, body=b"ping"))
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b"ping")


def test_a_head_sent_in_pieces_is_counted_across_them(served_capped: tuple[str, int]) -> None:
    """Bytes counted as they come, not per read: no piece is over the cap, their sum is."""
    sent = head_of(HEAD_CAP + 1)
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        for start in range(0, len(sent), 1000):
            sock.sendall(sent[start : start + 1000])
            time.sleep(0.02)
        received, _ = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 431 ")


def test_a_body_does_not_count(served_capped: tuple[str, int]) -> None:
    """A head near the cap and a body 16 times the cap, in one send: the body is the
    body limit's, not this one's."""
    body = b"b" * (HEAD_CAP * 16)
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(head_of(HEAD_CAP - 10, body=body))
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(body)


def test_each_request_of_a_kept_alive_connection_has_its_own_cap(
    served_capped: tuple[str, int],
) -> None:
    """Heads of three quarters of the cap, one after another (each in two sends) and then
    pipelined in one send: each is measured from its own first byte."""
    size = HEAD_CAP * 3 // 4
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        for number in range(3):
            sent = head_of(size, body=b"one %d" % number)
            sock.sendall(sent[: size // 2])
            time.sleep(0.05)
            sock.sendall(sent[size // 2 :])
            assert read_response(sock).endswith(b"one %d" % number)
        sock.sendall(b"".join(head_of(size, body=b"two %d" % n) for n in range(3)))
        answers, _ = read_responses(sock, 3)
    assert [answer.rpartition(b"\r\n")[2] for answer in answers] == [b"two 0", b"two 1", b"two 2"]


def test_a_pipelined_head_over_the_cap_is_refused_after_the_answer_before_it(
    served_capped: tuple[str, int],
) -> None:
    """The request before it is answered first, then the 431, and the connection closes."""
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(request(b"first") + head_of(HEAD_CAP * 2))
        [first], received = read_responses(sock, 1)
        rest, _ = read_until_closed(sock)
    assert first.startswith(b"HTTP/1.1 200 ")
    assert first.endswith(b"first")
    assert (received + rest).startswith(b"HTTP/1.1 431 ")


# --- chunk framing and trailers ---------------------------------------------------------


def chunked(*chunks: bytes, trailer: bytes = b"", path: bytes = b"/") -> bytes:
    """A chunked request to `path`: its head, `chunks` framed, the last chunk, `trailer`."""
    head = b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n" % path
    framed = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks)
    return head + framed + b"0\r\n" + trailer + b"\r\n"


@pytest.mark.parametrize("sends", ["one send", "head, then trailer"])
def test_a_trailer_over_the_cap_is_answered_431_then_closed(
    served_capped: tuple[str, int], caplog: pytest.LogCaptureFixture, sends: str
) -> None:
    """Trailer fields come after the body and count as a head: four times the cap of
    them is refused before the app has the whole request, which it never answers."""
    caplog.set_level(logging.INFO, logger="redstring.api")
    sent = chunked(b"ping", trailer=b"x-trailer: " + b"a" * (HEAD_CAP * 4) + b"\r\n")
    cut = len(sent) if sends == "one send" else sent.index(b"0\r\nx-trailer")
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(sent[:cut])
        time.sleep(0.05)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(sent[cut:])
        received, _ = read_until_closed(sock)
    headers, error = refusal(received, b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert error["extensions"]["code"] == "REQUEST_HEADER_FIELDS_TOO_LARGE"
    assert error["message"].startswith("The request's trailer ")
    assert f"{HEAD_CAP} bytes" in error["message"]
    assert headers["connection"] == "close"
    [access] = [r for r in caplog.records if r.name == "redstring.api.access"]
    assert access.getMessage() == "- - 431"
    [closed] = [r for r in caplog.records if r.getMessage().startswith("closed a connection")]
    assert closed.getMessage() == (
        f"closed a connection from 127.0.0.1: a request head over {HEAD_CAP} bytes"
    )


def test_a_trailer_over_the_cap_cuts_a_response_being_sent(
    served_capped: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    """An app that started answering before reading the body: no room for a 431 after
    half a response, so the connection closes, with its line but no access line."""
    caplog.set_level(logging.INFO, logger="redstring.api")
    trailer = b"x-trailer: " + b"a" * (HEAD_CAP * 4) + b"\r\n"
    sent = chunked(b"ping", trailer=trailer, path=b"/stream")
    cut = sent.index(b"0\r\nx-trailer")
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(sent[:cut])
        time.sleep(0.05)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(sent[cut:])
        received, _ = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 200 ")
    assert b"first part" in received
    assert b"431" not in received
    assert b"ping" not in received.partition(b"first part")[2]
    assert not [r for r in caplog.records if r.name == "redstring.api.access"]
    [closed] = [r for r in caplog.records if r.getMessage().startswith("closed a connection")]
    assert closed.getMessage().endswith(f"a request head over {HEAD_CAP} bytes")


def test_a_trailer_under_the_cap_is_served(served_capped: tuple[str, int]) -> None:
    trailer = b"x-trailer: " + b"a" * (HEAD_CAP // 2) + b"\r\n"
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(chunked(b"ping", trailer=trailer))
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b"\r\n\r\nping")


def test_a_body_of_many_small_chunks_is_served(served_capped: tuple[str, int]) -> None:
    """32 KiB in chunks of 10 bytes: 16 KiB of framing in all, four times the cap, but a
    few bytes of it between one chunk's bytes and the next's."""
    chunks = [b"%010d" % number for number in range(HEAD_CAP * 8 // 10)]
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(chunked(*chunks))
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b"\r\n\r\n" + b"".join(chunks))


def test_a_pipelined_trailer_over_the_cap_is_refused_after_the_answer_before_it(
    served_capped: tuple[str, int],
) -> None:
    trailer = b"x-trailer: " + b"a" * (HEAD_CAP * 4) + b"\r\n"
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(request(b"first") + chunked(b"second", trailer=trailer))
        [first], received = read_responses(sock, 1)
        rest, _ = read_until_closed(sock)
    assert first.startswith(b"HTTP/1.1 200 ")
    assert first.endswith(b"first")
    assert (received + rest).startswith(b"HTTP/1.1 431 ")
    assert b"second" not in received + rest


# --- CORS on a connection's refusals -----------------------------------------------------


def cors_part(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.startswith("access-control-") or k == "vary"}


def app_cors_headers(origin: str | None) -> dict[str, str]:
    """The CORS headers the app itself (its middleware) answers a request from `origin`
    (None: one without `Origin`) with, `APP_ORIGIN` allowed."""

    async def answered() -> httpx.Response:
        app = create_app(Settings(cors_origins=(APP_ORIGIN,)), services=memory_services())
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.get("/healthz", headers={} if origin is None else {"origin": origin})

    return cors_part(dict(asyncio.run(answered()).headers))


def with_origin(sent: bytes, origin: str) -> bytes:
    """`sent` with an `Origin` header after its `Host`."""
    host = b"Host: 127.0.0.1\r\n"
    return sent.replace(host, host + b"Origin: " + origin.encode() + b"\r\n", 1)


def refused_cors(server: tuple[str, int], sent: bytes, status_line: bytes) -> dict[str, str]:
    """The CORS headers of the refusal (`status_line`) `server` answers `sent` with."""
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(sent)
        received, _ = read_until_closed(sock)
    headers, _ = refusal(received, status_line)
    return cors_part(headers)


def test_the_app_answers_a_listed_origin_with_cors_headers() -> None:
    """What the refusals below are compared with."""
    assert app_cors_headers(APP_ORIGIN)["access-control-allow-origin"] == APP_ORIGIN
    assert "access-control-allow-origin" not in app_cors_headers("http://elsewhere.test")


@pytest.mark.parametrize("origin", [APP_ORIGIN, "http://elsewhere.test"])
def test_a_431_carries_the_cors_headers_the_app_gives_its_origin(
    served_capped: tuple[str, int], origin: str
) -> None:
    """So that a page of a listed origin can read the refusal; the headers are the
    app's CORS middleware's, for a listed origin and for another alike."""
    sent = with_origin(head_of(HEAD_CAP + 1), origin)
    assert refused_cors(served_capped, sent, b"HTTP/1.1 431 ") == app_cors_headers(origin)


def test_a_431_of_a_head_with_two_origins_answers_the_first_as_the_app_does(
    served_capped: tuple[str, int],
) -> None:
    """The app's middleware reads a head's first `Origin`; the refusal did the last."""
    sent = with_origin(with_origin(head_of(HEAD_CAP + 1), APP_ORIGIN), "http://elsewhere.test")
    cors = refused_cors(served_capped, sent, b"HTTP/1.1 431 ")
    assert cors == app_cors_headers("http://elsewhere.test")


def test_a_trailer_431_carries_the_cors_headers_of_its_heads_origin(
    served_capped: tuple[str, int],
) -> None:
    trailer = b"origin: http://elsewhere.test\r\nx-t: " + b"a" * (HEAD_CAP * 4) + b"\r\n"
    sent = with_origin(chunked(b"ping", trailer=trailer), APP_ORIGIN)
    cut = sent.index(b"0\r\norigin")
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(sent[:cut])
        time.sleep(0.05)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(sent[cut:])
        received, _ = read_until_closed(sock)
    headers, _ = refusal(received, b"HTTP/1.1 431 ")
    assert cors_part(headers) == app_cors_headers(APP_ORIGIN)  # a trailer's is no origin


def test_a_408_carries_the_cors_headers_of_the_origin_that_sent_it(
    served_capped: tuple[str, int],
) -> None:
    """On the protocol `serve` runs (httptools tells each header as it comes; h11 tells
    none before the head is whole, so its 408 carries none)."""
    sent = with_origin(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Late: a", APP_ORIGIN)
    assert refused_cors(served_capped, sent, b"HTTP/1.1 408 ") == app_cors_headers(APP_ORIGIN)


def test_a_refusal_after_a_request_from_an_origin_carries_none_of_its_headers(
    served_capped: tuple[str, int],
) -> None:
    """The origin is the refused head's own, not the one of the request before it."""
    with socket.create_connection(served_capped, timeout=HANG_GUARD) as sock:
        sock.sendall(with_origin(request(), APP_ORIGIN))
        assert read_response(sock).startswith(b"HTTP/1.1 200 ")
        sock.sendall(head_of(HEAD_CAP + 1))
        received, _ = read_until_closed(sock)
    headers, _ = refusal(received, b"HTTP/1.1 431 ")
    assert cors_part(headers) == app_cors_headers(None)
    assert "access-control-allow-origin" not in headers


# --- `redstring serve` ------------------------------------------------------------------


@pytest.fixture(scope="module")
def serving() -> Iterator[tuple[LoggedProcess, tuple[str, int]]]:
    port = free_loopback_port()
    process = redstring_server(
        port,
        demo=False,
        graphiql="false",
        header_timeout="1",
        keep_alive_timeout="2.5",
        request_timeout="2",
        cors_origins=APP_ORIGIN,
    )
    try:
        process.wait_until_answering(f"http://127.0.0.1:{port}/readyz")
        yield process, ("127.0.0.1", port)
    finally:
        process.stop()


@pytest.fixture
def server(serving: tuple[LoggedProcess, tuple[str, int]]) -> tuple[str, int]:
    return serving[1]


def test_serve_closes_a_connection_whose_head_is_late(
    serving: tuple[LoggedProcess, tuple[str, int]],
) -> None:
    process, server = serving
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(b"POST /graphql HTTP/1.1\r\n")
        received, took = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert 0.8 <= took < 3
    request_id = response_headers(received.partition(b"\r\n\r\n")[0])["x-request-id"]
    _wait_for_output(process, lambda output: output.count(request_id) >= 2)
    # The access line, and the connection's line (with the client's address) by its id.
    access, closed = [line for line in process.output.splitlines() if request_id in line]
    assert access.startswith(f"INFO redstring.api.access: - - 408 request_id={request_id} ")
    assert "outcome=REQUEST_TIMEOUT" in access
    assert closed.startswith("INFO redstring.api: closed a connection from 127.0.0.1: ")


def test_serve_answers_a_late_head_from_a_listed_origin_with_its_cors_headers(
    server: tuple[str, int],
) -> None:
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        head = b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        sock.sendall(with_origin(head, APP_ORIGIN))
        received, _ = read_until_closed(sock)
    headers, _ = refusal(received, b"HTTP/1.1 408 ")
    assert headers["access-control-allow-origin"] == APP_ORIGIN
    assert cors_part(headers) == app_cors_headers(APP_ORIGIN)


def test_serve_keeps_an_idle_connection_for_its_keep_alive_timeout(
    server: tuple[str, int],
) -> None:
    """2.5 s of keep-alive: an idle connection outlives the 1 s head timeout and is
    closed well before uvicorn's default 5 s."""
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(GRAPHQL_HEAD % len(TYPENAME) + TYPENAME)
        assert b"__typename" in read_response(sock)
        time.sleep(1.5)
        sock.sendall(GRAPHQL_HEAD % len(TYPENAME) + TYPENAME)
        assert b"__typename" in read_response(sock)
        received, took = read_until_closed(sock)
    assert received == b""
    assert 2.0 <= took < 4.5


def test_serve_answers_a_body_sent_too_slowly_at_the_request_deadline_then_closes(
    server: tuple[str, int],
) -> None:
    """The head came, so the body is the request deadline's (2 s here): a 408 with the
    error body (the client was late, not the server); the bytes the client still
    trickles after it do not keep the connection."""
    body = b" " * 200
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(GRAPHQL_HEAD % len(body))
        started = time.monotonic()
        received = b""
        try:
            for _ in range(len(body)):
                sock.sendall(b" ")
                time.sleep(0.1)
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    data = sock.recv(1 << 16)
                    received += data
                    if not data:
                        break
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed_after = time.monotonic() - started
    _, error = refusal(received, b"HTTP/1.1 408 ")
    assert error["extensions"]["code"] == "REQUEST_TIMEOUT"
    assert error["message"] == "The request's body did not arrive within 2 s"
    assert closed_after < 2 + 1 + 2


def test_serve_serves_a_large_head_under_its_default_cap(server: tuple[str, int]) -> None:
    """A 60 KB header (a bearer token with many claims, say) is under the 64 KiB default."""
    body = TYPENAME
    head = GRAPHQL_HEAD % len(body)
    padded = head[:-2] + b"x-large: " + b"a" * 60_000 + b"\r\n\r\n"
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(padded + body)
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert b"__typename" in answer


def _flooded_until_closed(server: tuple[str, int], start: bytes) -> bool:
    """Whether the server closed a connection that sent `start` and then up to 64 MiB of
    `a` before half of them were sent (the field `start` opens, never ended)."""
    chunk = b"a" * (1 << 16)
    sent = 0
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(start)
        try:
            while sent < 64 << 20:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            return sent < 32 << 20
    return False


def _wait_for_output(process: LoggedProcess, seen: Callable[[str], bool]) -> None:
    give_up = time.monotonic() + HANG_GUARD
    while not seen(process.output):
        assert time.monotonic() < give_up, process.output[-2000:]
        time.sleep(0.05)


def test_serve_refuses_a_huge_head_without_reading_it(
    serving: tuple[LoggedProcess, tuple[str, int]],
) -> None:
    """The review's attack: a header of 64 MiB. The server answers 431 once the head
    passes 64 KiB and closes, so the client cannot send the rest."""
    process, server = serving
    assert _flooded_until_closed(server, b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Junk: ")
    _wait_for_output(process, lambda output: "- - 431 " in output)
    assert "a request head over 65536 bytes" in process.output


def test_serve_refuses_a_huge_trailer_without_reading_it(
    serving: tuple[LoggedProcess, tuple[str, int]],
) -> None:
    """The review's second attack: `/healthz` with a chunked body whose trailer is a field
    of 64 MiB. `/healthz` answers without reading the body; the connection then answers
    431 once the trailer passes 64 KiB, and closes."""
    process, server = serving
    refusal = "a request head over 65536 bytes"
    refusals = process.output.count(refusal)
    start = (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n"
        b"4\r\nping\r\n0\r\nX-Trailer: "
    )
    assert _flooded_until_closed(server, start)
    _wait_for_output(process, lambda output: output.count(refusal) > refusals)
