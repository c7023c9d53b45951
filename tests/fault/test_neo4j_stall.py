"""A Neo4j that stalls (its process stopped by SIGSTOP, as a network partition would
leave it): reads and writes give up on the client after the transaction timeout and
`Neo4jSettings.answer_slack`, schema statements (`ensure_schema`, a start) after what
they may wait for and the slack, with `StoreUnavailableError` naming the wait, and an
outage retry that outlasts the stall carries a write through it.

The Neo4j is this test's own (`scripts/neo4j_server.py --name stall`), never the shared
server: it is stopped and always continued (SIGCONT) and deleted afterwards. A stopped
server enforces no transaction timeout of its own; reads had no bound on the client and
hung, writes failed after 40 s with an empty reason and were never tried again, and
`ensure_schema` hung (and with it `redstring serve`'s start).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import replace

import pytest

from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jSettings, connect_driver, cypher
from redstring.domain.entity import Entity
from redstring.domain.errors import StoreUnavailableError
from redstring.domain.ids import TenantId
from tests.fault.test_neo4j_restart import neo4j_script
from tests.processes import REPO

pytestmark = pytest.mark.neo4j

INSTANCE = "stall"
# The server's transaction timeout and the client's slack after it: a stalled call
# gives up after their sum. Data is written and read back with the default settings,
# which a cold server's first statements (planned, compiled) need.
TIMEOUT_S = 2.0
SLACK_S = 1.0
GIVES_UP = r"no answer from Neo4j within 3 s"
GIVES_UP_WITHIN_S = 8.0
# `db.awaitIndexes`' own wait, longer than the transaction timeout: given up after it
# and the slack.
AWAIT_S = 4
AWAIT_GIVES_UP = r"no answer from Neo4j within 5 s"


@pytest.fixture(scope="module")
def stall_neo4j() -> Iterator[dict[str, str]]:
    """A Neo4j of this module's own: its connection settings and pid; deleted after."""
    neo4j_script("stop", instance=INSTANCE)
    try:
        neo4j_script("start", instance=INSTANCE)
        home = REPO / ".cache" / "neo4j" / INSTANCE
        env = dict(line.split("=", 1) for line in (home / "env").read_text().splitlines())
        env["pid"] = (home / "neo4j.pid").read_text().strip()
        yield env
    finally:
        neo4j_script("stop", instance=INSTANCE)


@contextlib.contextmanager
def stalled(pid: int) -> Iterator[None]:
    """The server's process stopped for the block, continued whatever happens."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@contextlib.asynccontextmanager
async def stores(
    server: dict[str, str], *, outage_retry: float = 0.0
) -> AsyncIterator[tuple[Neo4jGraphStore, Neo4jGraphStore]]:
    """Two graph stores on `server` over one driver (one pool, its connections warm): of
    the default settings, and one that gives up on a stalled server after `GIVES_UP`
    and waits out an outage for `outage_retry` seconds."""
    settings = Neo4jSettings(connection_timeout=1.0, acquisition_timeout=2.0)
    short = replace(
        settings,
        transaction_timeout=TIMEOUT_S,
        answer_slack=SLACK_S,
        outage_retry_time=outage_retry,
        index_build_time=TIMEOUT_S,
    )
    auth = (server["NEO4J_USER"], server["NEO4J_PASSWORD"])
    async with connect_driver(server["NEO4J_URI"], auth, settings) as driver:
        setup = Neo4jGraphStore(driver, database=None, settings=settings)
        await setup.ensure_schema()
        yield setup, Neo4jGraphStore(driver, database=None, settings=short)


def _entity(tenant: TenantId, name: str) -> Entity:
    return Entity(id=uuid.uuid4(), tenant_id=tenant, name=name, entity_type="company")


async def timed(call: Awaitable[object], limit: float = 60) -> tuple[float, BaseException | None]:
    """Seconds `call` took, and what it raised (a `TimeoutError` past `limit`)."""
    started = time.monotonic()
    try:
        await asyncio.wait_for(call, limit)
    except Exception as exc:
        return time.monotonic() - started, exc
    return time.monotonic() - started, None


async def test_reads_and_writes_to_a_stalled_server_fail_naming_the_wait(
    stall_neo4j: dict[str, str],
) -> None:
    tenant = TenantId(uuid.uuid4())
    known = _entity(tenant, "Nordic Iron")
    async with stores(stall_neo4j) as (setup, graph):
        await setup.upsert_entities([known, _entity(tenant, "Other")])
        # Two connections in the pool, one for the read and one for the write.
        await asyncio.gather(*(setup.get_entities([known.id], tenant) for _ in range(2)))
        with stalled(int(stall_neo4j["pid"])):
            outcomes = await asyncio.gather(
                timed(graph.get_entities([known.id], tenant)),
                timed(graph.upsert_entities([_entity(tenant, "Other")])),
            )
        for took, failure in outcomes:
            assert isinstance(failure, StoreUnavailableError), failure
            assert re.search(GIVES_UP, str(failure)), failure
            assert took < GIVES_UP_WITHIN_S
        # Continued, the server answers the same store again.
        assert [e.name for e in await setup.get_entities([known.id], tenant)] == ["Nordic Iron"]


async def test_schema_statements_to_a_stalled_server_fail_naming_their_wait(
    stall_neo4j: dict[str, str],
) -> None:
    """A start (`ensure_schema`) against a server that stalls fails as a read does: its
    constraints after `index_build_time` and the slack, `db.awaitIndexes` after its own
    seconds and the slack. Both hung without a bound."""
    tenant = TenantId(uuid.uuid4())
    async with stores(stall_neo4j) as (setup, graph):
        # Two connections in the pool, one for each call.
        await asyncio.gather(*(setup.get_entities([uuid.uuid4()], tenant) for _ in range(2)))
        with stalled(int(stall_neo4j["pid"])):
            (schema_took, schema_failure), (await_took, await_failure) = await asyncio.gather(
                timed(graph.ensure_schema(), limit=20),
                timed(
                    graph.connection.run_schema(
                        cypher.AWAIT_INDEXES, {"seconds": AWAIT_S}, takes=AWAIT_S
                    ),
                    limit=20,
                ),
            )
        assert isinstance(schema_failure, StoreUnavailableError), schema_failure
        assert re.search(GIVES_UP, str(schema_failure)), schema_failure
        assert schema_took < GIVES_UP_WITHIN_S
        assert isinstance(await_failure, StoreUnavailableError), await_failure
        assert re.search(AWAIT_GIVES_UP, str(await_failure)), await_failure
        assert AWAIT_S < await_took < AWAIT_S + GIVES_UP_WITHIN_S
        # Continued, the server answers the same statements again.
        await graph.ensure_schema()


async def test_an_outage_retry_carries_a_write_through_a_stall(
    stall_neo4j: dict[str, str],
) -> None:
    tenant = TenantId(uuid.uuid4())
    written = _entity(tenant, "Baltic Steel")
    async with stores(stall_neo4j, outage_retry=30.0) as (setup, graph):
        await setup.upsert_entities([_entity(tenant, "warm")])
        pid = int(stall_neo4j["pid"])
        os.kill(pid, signal.SIGSTOP)
        try:
            loop = asyncio.get_running_loop()
            loop.call_later(7.0, os.kill, pid, signal.SIGCONT)  # past a give-up or two
            await asyncio.wait_for(graph.upsert_entities([written]), 60)
        finally:
            os.kill(pid, signal.SIGCONT)
        found = await setup.get_entities([written.id], tenant)
        assert [e.name for e in found] == ["Baltic Steel"]
