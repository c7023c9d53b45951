"""A real HTTP server speaking the embeddings API, with scripted failures, for the tests.

`EmbeddingAPI` is the Starlette app's state: what it was sent and what it
should answer. `serving` runs it under uvicorn on a free 127.0.0.1 port in
the test's own event loop.
"""

from __future__ import annotations

import asyncio
import socket
import zlib
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def vector_for(text: str, dimension: int) -> list[float]:
    """The vector the server gives `text`: distinct per text, so order mistakes show."""
    seed = zlib.crc32(text.encode())
    return [float((seed >> (i % 24)) % 97 + i) for i in range(dimension)]


@dataclass
class Failure:
    """One scripted answer instead of embeddings: a status, headers and body, after a stall."""

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    stall: float = 0.0


@dataclass
class EmbeddingAPI:
    """State of the fake server: the script it follows and the requests it saw."""

    dimension: int = 8
    latency: float = 0.0
    # Inputs longer than this many tokens are refused with a 400, as a model with a
    # context limit refuses them; a token is counted per UTF-8 byte, the most a
    # byte-level tokenizer (OpenAI's) ever makes of a text. None: no limit.
    max_input_tokens: int | None = None
    # A request whose inputs sum to more tokens than this, counted the same way, is
    # refused with a 400, as OpenAI refuses one of over 300,000. None: no limit.
    max_request_tokens: int | None = None
    # An input holding one of these words is refused, with `refusal_status`, as a model
    # refuses a text it will not take (text-embeddings-inference answers 413 for one past
    # its token limit, OpenAI 400).
    refused_words: tuple[str, ...] = ()
    refusal_status: int = 400
    reverse_data: bool = False
    failures: deque[Failure] = field(default_factory=deque)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    released: asyncio.Event = field(default_factory=asyncio.Event)

    async def embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.bodies.append(body)
        self.authorizations.append(request.headers.get("authorization"))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            too_long = self._too_long(body["input"])
            if too_long is not None:
                return JSONResponse({"error": {"message": too_long}}, status_code=400)
            refused = self._refused(body["input"])
            if refused is not None:
                return JSONResponse(
                    {"error": {"message": refused}}, status_code=self.refusal_status
                )
            if self.failures:
                failure = self.failures.popleft()
                if failure.stall:
                    # Ends early when the test is torn down, so shutdown does not wait.
                    with suppress(TimeoutError):
                        await asyncio.wait_for(self.released.wait(), failure.stall)
                return JSONResponse(
                    failure.body or {"error": {"message": f"scripted {failure.status}"}},
                    status_code=failure.status,
                    headers=failure.headers,
                )
            if self.latency:
                await asyncio.sleep(self.latency)
            data = [
                {"object": "embedding", "index": i, "embedding": vector_for(t, self.dimension)}
                for i, t in enumerate(body["input"])
            ]
            if self.reverse_data:
                data.reverse()
            return JSONResponse({"object": "list", "data": data, "model": body["model"]})
        finally:
            self.in_flight -= 1

    def _too_long(self, texts: list[str]) -> str | None:
        """What the server says of a request over `max_request_tokens`, or of the first input
        over `max_input_tokens`, if any."""
        total = sum(len(text.encode()) for text in texts)
        if self.max_request_tokens is not None and total > self.max_request_tokens:
            return f"Requested {total} tokens, max {self.max_request_tokens} tokens per request"
        if self.max_input_tokens is None:
            return None
        for position, text in enumerate(texts):
            tokens = len(text.encode())
            if tokens > self.max_input_tokens:
                return (
                    f"input {position} is {tokens} tokens long; this model reads at most "
                    f"{self.max_input_tokens}"
                )
        return None

    def _refused(self, texts: list[str]) -> str | None:
        """What the server says of a request with an input it refuses, if any."""
        for position, text in enumerate(texts):
            if any(word in text for word in self.refused_words):
                return f"Input validation error: input {position} is not taken by this model"
        return None

    def inputs_of(self, first_request: int = 0) -> list[list[str]]:
        """The inputs of each request from `first_request` on, in the order they came."""
        return [list(body["input"]) for body in self.bodies[first_request:]]

    @property
    def requests(self) -> int:
        return len(self.bodies)


@asynccontextmanager
async def serving(api: EmbeddingAPI) -> AsyncIterator[str]:
    """Serve `api` on a free loopback port; yields the base URL (`http://127.0.0.1:PORT/v1`)."""
    app = Starlette(routes=[Route("/v1/embeddings", api.embeddings, methods=["POST"])])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        api.released.set()
        server.should_exit = True
        await task
        sock.close()
