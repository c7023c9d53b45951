"""Transactions the server ends: a write that waited for a lock another transaction holds
past the transaction timeout, a read that ran past it.

The lock is a real one, held by an open transaction of the test's own on the entity's
node; the transaction timeout of the writer is two seconds
(`REDSTRING_NEO4J_TRANSACTION_TIMEOUT`), so each ended attempt costs about that (one
second has the start's own reads ended on a loaded machine).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import neo4j
import pytest

from redstring import Entity, Redstring
from redstring.adapters.neo4j import Neo4jSettings, connect_driver
from redstring.adapters.neo4j.connection import Neo4jConnection
from redstring.api.errors import described
from redstring.api.settings import Settings
from redstring.domain.errors import StoreUnavailableError
from redstring.domain.ids import TenantId
from redstring.testing import new_tenant
from tests.processes import REPO, neo4j_child_environment

LOCK_WAIT = "Neo4j ended a transaction that waited for a lock another transaction holds"


TIMEOUT = 2


def _settings(
    neo4j_auth: tuple[str, tuple[str, str]], *, retry: float, timeout: float = TIMEOUT
) -> Settings:
    uri, (user, password) = neo4j_auth
    return Settings(
        backend="neo4j",
        neo4j_uri=uri,
        neo4j_user=user,
        neo4j_password=password,
        neo4j_outage_retry=retry,
        neo4j_transaction_timeout=timeout,
        embeddings="hashing",
    )


@asynccontextmanager
async def _locked(
    neo4j_auth: tuple[str, tuple[str, str]], entity: Entity
) -> AsyncIterator[neo4j.AsyncTransaction]:
    """A write lock on `entity`'s node, held by an open transaction until the end (rolled
    back) or until the caller rolls it back."""
    uri, auth = neo4j_auth
    async with connect_driver(uri, auth) as driver, driver.session() as session:
        tx = await session.begin_transaction()
        try:
            result = await tx.run(
                "MATCH (e:Entity {tenant_id: $tenant, id: $id}) SET e.held = true "
                "RETURN count(e) AS n",
                tenant=str(entity.tenant_id),
                id=str(entity.id),
            )
            assert (await result.single(strict=True))["n"] == 1
            yield tx
        finally:
            if not tx.closed():
                await tx.rollback()


async def _stored(neo4j_auth: tuple[str, tuple[str, str]], tenant: TenantId) -> Entity:
    entity = Entity.create(tenant, "Locked Corp", "company")
    async with Redstring.from_settings(_settings(neo4j_auth, retry=0, timeout=30)) as client:
        await client.upsert([entity])
    return entity


async def _logged(caplog: pytest.LogCaptureFixture, words: str, *, within: float) -> None:
    """Wait until a log line holds `words` (an attempt ends `TIMEOUT` after it began,
    which on a loaded machine may come well after the call was made)."""
    deadline = time.monotonic() + within
    while not any(words in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, f"no line with {words!r} within {within} s"
        await asyncio.sleep(0.1)


def _changed(entity: Entity) -> Entity:
    return Entity.create(entity.tenant_id, entity.name, entity.entity_type, description="changed")


async def test_a_write_ended_waiting_for_a_lock_says_so_and_names_the_setting(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Without an outage retry (a server's), it fails once the server ends it, as
    `StoreUnavailableError`: the driver's `ClientError` was raised as it was."""
    entity = await _stored(neo4j_auth, new_tenant())
    async with (
        Redstring.from_settings(_settings(neo4j_auth, retry=0)) as client,
        _locked(neo4j_auth, entity),
    ):
        with pytest.raises(StoreUnavailableError) as raised:
            await client.upsert([_changed(entity)])
    assert str(raised.value).startswith(LOCK_WAIT), raised.value
    assert f"({TIMEOUT} s)" in str(raised.value)
    assert raised.value.options == ("transaction_timeout",)
    assert described(raised.value).endswith(
        "; REDSTRING_NEO4J_TRANSACTION_TIMEOUT sets the timeout"
    )


async def test_a_write_ended_waiting_for_a_lock_is_tried_again_within_the_outage_retry(
    neo4j_auth: tuple[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    """Once the lock is released, the write tried again goes through (every write is
    idempotent), where it failed whatever the outage retry."""
    entity = await _stored(neo4j_auth, new_tenant())
    changed = _changed(entity)
    async with Redstring.from_settings(_settings(neo4j_auth, retry=30)) as client:
        async with _locked(neo4j_auth, entity) as held:
            written = asyncio.ensure_future(client.upsert([changed]))
            await _logged(caplog, "outage retry", within=TIMEOUT + 20)  # an attempt ended
            assert not written.done()
            await held.rollback()
            await asyncio.wait_for(written, timeout=10)
        [found] = await client.graph.get_entities([entity.id], entity.tenant_id)
    assert found.description == "changed"
    waits = [r.getMessage() for r in caplog.records if "outage retry" in r.getMessage()]
    assert len(waits) == 1
    assert waits[0].startswith(LOCK_WAIT)
    assert waits[0].endswith("; trying it again, for up to 30 s (the outage retry time)")


async def test_a_read_ended_past_the_transaction_timeout_is_not_tried_again(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """A read holds no lock: the server ended it for its own work, which another try
    does again. It fails at once, whatever the outage retry, naming the timeout."""
    uri, auth = neo4j_auth
    settings = Neo4jSettings(transaction_timeout=0.5, outage_retry_time=60)
    async with connect_driver(uri, auth, settings) as driver:
        connection = Neo4jConnection(driver, database=None, settings=settings, owned=False)
        began = time.monotonic()
        with pytest.raises(StoreUnavailableError) as raised:
            await connection.query("UNWIND range(1, 1000000000) AS n RETURN sum(n) AS s", {})
        took = time.monotonic() - began
    assert str(raised.value).startswith("Neo4j ended a transaction that ran past the"), raised.value
    assert took < 20, took


def _load(
    path: Path, tenant: TenantId, neo4j_auth: tuple[str, tuple[str, str]], retry: str
) -> subprocess.Popen[str]:
    """`redstring load` of `path` into `tenant`, started."""
    env = neo4j_child_environment(
        neo4j_auth,
        REDSTRING_EMBEDDINGS="hashing",
        REDSTRING_NEO4J_OUTAGE_RETRY=retry,
        REDSTRING_NEO4J_TRANSACTION_TIMEOUT=str(TIMEOUT),
    )
    argv = [sys.executable, "-m", "redstring.api", "load", str(path), "--tenant", str(tenant)]
    return subprocess.Popen(
        argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


async def test_a_load_whose_write_is_ended_waiting_for_a_lock_says_so_in_one_line(
    neo4j_auth: tuple[str, tuple[str, str]], tmp_path: Path
) -> None:
    """It ended in a traceback of the driver's `ClientError`, without an `error:` line nor
    what is written."""
    tenant = new_tenant()
    entity = await _stored(neo4j_auth, tenant)
    path = tmp_path / "data.jsonl"
    path.write_text('{"kind": "entity", "name": "Locked Corp", "entity_type": "company"}\n')
    async with _locked(neo4j_auth, entity):
        load = _load(path, tenant, neo4j_auth, retry="0")
        _, err = await asyncio.to_thread(load.communicate, timeout=60)
    said = [line for line in err.splitlines() if "hashing provider" not in line]
    assert load.returncode == 1, err
    assert "Traceback" not in err, err
    error = next(line for line in said if line.startswith("error: "))
    assert error.startswith(f"error: {LOCK_WAIT}"), said
    assert error.endswith("; REDSTRING_NEO4J_TRANSACTION_TIMEOUT sets the timeout"), said
    assert said[-1].startswith("no batch is known to be written whole"), said


async def test_a_load_waits_for_a_lock_within_the_outage_retry(
    neo4j_auth: tuple[str, tuple[str, str]], tmp_path: Path
) -> None:
    tenant = new_tenant()
    entity = await _stored(neo4j_auth, tenant)
    path = tmp_path / "data.jsonl"
    path.write_text(
        '{"kind": "entity", "name": "Locked Corp", "entity_type": "company", '
        '"description": "loaded"}\n'
    )
    async with _locked(neo4j_auth, entity) as held:
        load = _load(path, tenant, neo4j_auth, retry="60")
        await asyncio.sleep(8)  # its start (2 to 3 s), then an ended try or two
        assert load.poll() is None
        await held.rollback()
        _, err = await asyncio.to_thread(load.communicate, timeout=60)
    assert load.returncode == 0, err
    assert LOCK_WAIT in err, err
    assert "; trying it again, for up to 60 s (the outage retry time)" in err, err
    async with Redstring.from_settings(_settings(neo4j_auth, retry=0, timeout=30)) as client:
        [found] = await client.graph.get_entities([entity.id], tenant)
    assert found.description == "loaded"
