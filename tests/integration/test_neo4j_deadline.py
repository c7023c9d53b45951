"""A request's deadline over Neo4j: the 504 comes at the deadline, whatever the driver
does to let go of the work it cancels.

The app (`create_app`, its endpoint, deadline and resolvers) serves stores over the
suite's Neo4j. A write waits for a lock another transaction holds on the same
entity, a server-side wait, until the request's deadline cancels it. The driver's
sessions are wrapped so that letting go of a cancelled one takes `LETTING_GO`
seconds and then fails with `SessionExpired`, as the driver did in a review under
load: a cancelled attempt waited on its own socket deadline and ended with
"Failed to write data to connection" after its request had been answered.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from redstring import Redstring
from redstring.adapters.embeddings import HashingEmbeddingProvider
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore
from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.testing import new_tenant

DEADLINE = 1.0  # REDSTRING_REQUEST_TIMEOUT, seconds
LETTING_GO = 4.0  # what the wrapped driver takes to let go of a cancelled session

UPSERT = """mutation ($t: ID!, $id: ID!) {
  upsertEntities(tenantId: $t, entities: [{id: $id, name: "Lock Probe", entityType: "probe"}]) {
    count
  }
}"""


class _SlowToLetGo:
    """A driver whose sessions, cancelled, take `LETTING_GO` seconds to close and then
    fail with `SessionExpired`; everything else is the real driver's."""

    def __init__(self, driver: neo4j.AsyncDriver) -> None:
        self._driver = driver
        self.let_go = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    @asynccontextmanager
    async def session(self, **config: Any) -> AsyncIterator[neo4j.AsyncSession]:
        async with self._driver.session(**config) as session:
            try:
                yield session
            except asyncio.CancelledError:
                await asyncio.sleep(LETTING_GO)  # the cancellation is spent: this sleeps
                self.let_go += 1
                raise neo4j_errors.SessionExpired(
                    "Failed to write data to connection (while letting go)"
                ) from None


@pytest.fixture
async def slow_driver(driver: neo4j.AsyncDriver) -> _SlowToLetGo:
    return _SlowToLetGo(driver)


@pytest.fixture
async def http(slow_driver: _SlowToLetGo) -> AsyncIterator[httpx.AsyncClient]:
    embeddings = HashingEmbeddingProvider(16)
    services = Redstring(
        embeddings=embeddings,
        graph=Neo4jGraphStore(slow_driver),  # type: ignore[arg-type]
        vectors=Neo4jVectorStore(slow_driver, embeddings.dimension),  # type: ignore[arg-type]
    )
    app = create_app(Settings(request_timeout=DEADLINE), services=services)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


async def test_a_write_waiting_on_a_lock_is_answered_at_the_deadline_and_let_go_quietly(
    http: httpx.AsyncClient,
    driver: neo4j.AsyncDriver,
    slow_driver: _SlowToLetGo,
    caplog: pytest.LogCaptureFixture,
) -> None:
    tenant, entity_id = str(new_tenant()), "a1b2c3d4-0000-4000-8000-00000000000a"
    variables = {"t": tenant, "id": entity_id}
    first = await http.post("/graphql", json={"query": UPSERT, "variables": variables})
    assert first.json()["data"] == {"upsertEntities": {"count": 1}}, first.text

    async with driver.session() as holder:
        locking = await holder.begin_transaction()
        await (
            await locking.run(
                "MATCH (e:Entity {tenant_id: $t, id: $id}) SET e.locked_by_test = true", variables
            )
        ).consume()
        try:
            started = time.monotonic()
            with caplog.at_level(logging.ERROR, logger="asyncio"):
                answer = await http.post("/graphql", json={"query": UPSERT, "variables": variables})
                took = time.monotonic() - started
                await asyncio.sleep(LETTING_GO + 1)  # the attempt let go meanwhile
                gc.collect()  # a task whose failure nobody retrieved says so when freed
        finally:
            await locking.rollback()

    assert answer.status_code == 504, answer.text
    assert answer.json()["errors"][0]["extensions"]["code"] == "REQUEST_TIMEOUT"
    assert took < DEADLINE + LETTING_GO / 2, took  # not the deadline plus the letting go
    assert slow_driver.let_go >= 1  # the driver did take its time, in the background
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]

    again = await http.post("/graphql", json={"query": UPSERT, "variables": variables})
    assert again.json()["data"] == {"upsertEntities": {"count": 1}}, again.text
