"""`/readyz` after an outage or a restart: a check that passes again warms the stores up
before ready, and so does one that finds the server started again since the last warm-up."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Sequence
from typing import Any

import httpx
import pytest

from redstring import Entity, EntityId, StoreUnavailableError, TenantId
from redstring.adapters.memory import InMemoryGraphStore
from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.ports.restarts import ServerStart
from tests.api.support import memory_services, services_with_graph, started


class OutageGraphStore(InMemoryGraphStore):
    """An in-memory graph store that is down while `down`, whose relationship reads
    (made by `Redstring.warm_up`, never by a readiness check) are counted and wait
    for `release`, and fail while `warm_up_fails`."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.warm_up_fails = False
        self.release = asyncio.Event()
        self.release.set()
        self.relationship_reads = 0
        self.cancelled = asyncio.Event()

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        if self.down:
            raise StoreUnavailableError("bolt://127.0.0.1:7687 refused the connection")
        return await super().get_entities(ids, tenant_id)

    async def relationships_of(self, *args: Any, **kwargs: Any) -> Any:
        self.relationship_reads += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        if self.warm_up_fails:
            raise StoreUnavailableError("the connection closed again")
        return await super().relationships_of(*args, **kwargs)


class RestartingGraphStore(OutageGraphStore):
    """An `OutageGraphStore` that tells when its server started (`StartReads`):
    `started`, which a test changes to restart the server between two checks."""

    def __init__(self) -> None:
        super().__init__()
        self.started = "first start"
        self.start_reads = 0

    @property
    def start_source(self) -> Hashable:
        return self

    async def last_started(self) -> ServerStart:
        self.start_reads += 1
        return ServerStart(server="127.0.0.1:7687", started=self.started)


async def _readiness(http: httpx.AsyncClient) -> tuple[int, str | None]:
    response = await http.get("/readyz")
    return response.status_code, response.json().get("reason")


async def _until_ready(http: httpx.AsyncClient) -> None:
    for _ in range(200):
        if (await _readiness(http))[0] == 200:
            return
        await asyncio.sleep(0.005)
    pytest.fail("/readyz never answered 200")


async def _until_warm_up_reads(graph: OutageGraphStore) -> None:
    """Until the warm-up has made its first relationship read."""
    for _ in range(200):
        if graph.relationship_reads:
            return
        await asyncio.sleep(0.005)


@pytest.fixture
def graph(request: pytest.FixtureRequest) -> OutageGraphStore:
    """An `OutageGraphStore`, or the subclass a test names (`indirect` parametrizing)."""
    store: OutageGraphStore = getattr(request, "param", OutageGraphStore)()
    return store


@pytest.fixture
def http(graph: OutageGraphStore) -> httpx.AsyncClient:
    app = create_app(Settings(), services=services_with_graph(memory_services(), graph))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


restarting = pytest.mark.parametrize("graph", [RestartingGraphStore], indirect=True)


async def test_ready_stores_are_not_warmed_up_again(
    http: httpx.AsyncClient, graph: OutageGraphStore
) -> None:
    async with http:
        for _ in range(3):
            assert await _readiness(http) == (200, None)
    assert graph.relationship_reads == 0


async def test_stores_back_from_an_outage_are_warmed_up_before_ready(
    http: httpx.AsyncClient, graph: OutageGraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    async with http:
        graph.down = True
        assert await _readiness(http) == (503, "store_unavailable")
        graph.down = False
        graph.release.clear()
        # The check passes, but the warm-up it starts holds readiness until it ends.
        assert await _readiness(http) == (503, "warming_up")
        assert await _readiness(http) == (503, "warming_up")
        graph.release.set()
        await _until_ready(http)
        reads = graph.relationship_reads
        assert reads >= 3  # one a direction
        # Warm again: later checks start no warm-up.
        assert await _readiness(http) == (200, None)
        assert graph.relationship_reads == reads
    assert "warm-up done" in caplog.text


async def test_a_failed_warm_up_leaves_the_stores_cold(
    http: httpx.AsyncClient, graph: OutageGraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    async with http:
        graph.down = True
        assert await _readiness(http) == (503, "store_unavailable")
        graph.down = False
        graph.warm_up_fails = True
        assert await _readiness(http) == (503, "warming_up")
        for _ in range(200):
            if "warm-up failed" in caplog.text:
                break
            await asyncio.sleep(0.005)
        assert "warm-up failed: StoreUnavailableError: the connection closed again" in caplog.text
        # The next passing check tries again; this time the warm-up succeeds.
        graph.warm_up_fails = False
        assert await _readiness(http) == (503, "warming_up")
        await _until_ready(http)


async def test_the_lifespan_cancels_a_warm_up_in_flight(graph: OutageGraphStore) -> None:
    app = create_app(Settings(), services=services_with_graph(memory_services(), graph))
    async with started(app) as http:
        graph.down = True
        assert await _readiness(http) == (503, "store_unavailable")
        graph.down = False
        graph.release.clear()
        assert await _readiness(http) == (503, "warming_up")
        await _until_warm_up_reads(graph)
        assert graph.relationship_reads == 1  # the warm-up waits in its first hop read
    await asyncio.wait_for(graph.cancelled.wait(), timeout=5)


@restarting
async def test_a_restart_that_no_check_saw_is_warmed_up_before_ready(
    http: httpx.AsyncClient, graph: RestartingGraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    async with http:
        assert await _readiness(http) == (200, None)
        assert await _readiness(http) == (200, None)
        assert graph.relationship_reads == 0
        # Down and up again between two checks: every read of the next one passes.
        graph.started = "second start"
        graph.release.clear()
        assert await _readiness(http) == (503, "warming_up")
        assert await _readiness(http) == (503, "warming_up")
        graph.release.set()
        await _until_ready(http)
        reads = graph.relationship_reads
        assert reads >= 3
        assert await _readiness(http) == (200, None)
        assert graph.relationship_reads == reads
    assert "a store's server started again" in caplog.text
    assert "warm-up done" in caplog.text


@restarting
async def test_a_restart_during_a_warm_up_is_warmed_up_again(
    http: httpx.AsyncClient, graph: RestartingGraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    async with http:
        assert await _readiness(http) == (200, None)
        graph.started = "second start"
        graph.release.clear()
        assert await _readiness(http) == (503, "warming_up")
        await _until_warm_up_reads(graph)
        # Started again after the warm-up read the starts: what it warms is lost too.
        graph.started = "third start"
        graph.release.set()
        await _until_ready(http)
        assert await _readiness(http) == (200, None)
    assert caplog.text.count("a store's server started again") == 2
    assert caplog.text.count("warm-up done") == 2
