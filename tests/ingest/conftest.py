"""Fixtures of the `redstring load` tests: the services a load writes into, and Ctrl-C."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.ingest.support import GraphStoreFailingAt, services_over


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Redstring:
    """In-memory services whose stores every `redstring load` of the test writes into:
    each load opens (and closes) services of its own over them, as each command does."""
    services = services_over(graph=GraphStoreFailingAt(fail_at=None))

    async def opened(settings: Settings) -> Redstring:
        return services_over(graph=services.graph, vectors=services.vectors)

    monkeypatch.setattr("redstring.api.command_line.open_client", opened)
    return services


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler, as `redstring load` starts with. `asyncio.run` turns
    Ctrl-C into cancelling the load only over that handler, and an earlier test can leave
    another: uvicorn puts back the handler it found, which may be pytest-asyncio's."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
