"""`Neo4jConnection.query` and `.write` try a read or a write transaction again: at once,
one time, after losing the server, then with growing delays within `outage_retry_time`;
and with growing delays within `max_retry_time` after a transient server error.

Connections go through a TCP proxy on the loopback address in front of the real
server, which can close the connections it accepts. A transient error cannot be
provoked on one Community server at will (a follower behind a bookmark, a leader
election), so for those tests a driver wrapper raises the driver's own
`TransientError` for the first reads and passes every other call to the server.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlparse

import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from redstring import Entity, Redstring
from redstring.adapters.neo4j import Neo4jSettings, connect_driver
from redstring.adapters.neo4j.connection import Neo4jConnection
from redstring.api.settings import Settings
from redstring.domain.errors import StoreUnavailableError
from redstring.testing import new_tenant


class _Proxy:
    """Forwards each connection to the server, except that it closes at once the first
    `refusals` connections it accepts (every one while `refusals` is None)."""

    def __init__(self, upstream: tuple[str, int], refusals: int | None) -> None:
        self._upstream = upstream
        self._refusals = refusals
        self.accepted = 0
        self._writers: list[asyncio.StreamWriter] = []

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.append(writer)
        if self._refusals is None or self._refusals > 0:
            if self._refusals is not None:
                self._refusals -= 1
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        self._writers.append(up_writer)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    def restart(self, refusals: int) -> None:
        """Close every connection open now, as a server that went away would, and refuse
        the next `refusals` ones."""
        for writer in self._writers:
            writer.close()
        self._writers.clear()
        self._refusals = refusals

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[str]:
        """The proxy's `bolt://` address while it listens on a free loopback port."""
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            yield f"bolt://127.0.0.1:{port}"
        finally:
            server.close()
            for writer in self._writers:
                writer.close()
            await server.wait_closed()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except OSError:
        pass
    finally:
        sink.close()


_SETTINGS = Neo4jSettings(connection_timeout=1.0, acquisition_timeout=2.0, max_retry_time=1.0)


def _server_address(neo4j_auth: tuple[str, tuple[str, str]]) -> tuple[str, int]:
    parsed = urlparse(neo4j_auth[0])
    assert parsed.hostname is not None
    return parsed.hostname, parsed.port or 7687


@asynccontextmanager
async def _through_proxy(
    neo4j_auth: tuple[str, tuple[str, str]],
    refusals: int | None,
    settings: Neo4jSettings = _SETTINGS,
) -> AsyncIterator[tuple[_Proxy, Neo4jConnection]]:
    """A connection whose driver reaches the server through a `_Proxy` that refuses
    `refusals` connections first (every one while None)."""
    proxy = _Proxy(_server_address(neo4j_auth), refusals)
    async with proxy.serving() as uri, connect_driver(uri, neo4j_auth[1], settings) as driver:
        yield proxy, Neo4jConnection(driver, database=None, settings=settings, owned=False)


async def test_a_read_is_tried_again_at_once_after_losing_the_server(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """The first connection is closed before Bolt's handshake (as by a server that went
    away); the read connects again at once and answers from the server."""
    async with _through_proxy(neo4j_auth, refusals=1) as (proxy, connection):
        [record] = await connection.query("RETURN $asked AS answer", {"asked": 42})
    assert record["answer"] == 42
    assert proxy.accepted == 2


async def test_a_read_from_a_server_that_stays_away_fails_after_one_retry(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Losing the server is retried once, not for `max_retry_time`: a server that is down
    answers `StoreUnavailableError` at once (docs/neo4j.md, "Reads, routing and
    bookmarks"), however long the retry time."""
    settings = Neo4jSettings(connection_timeout=1.0, acquisition_timeout=2.0, max_retry_time=60)
    async with _through_proxy(neo4j_auth, None, settings) as (proxy, connection):
        with pytest.raises(StoreUnavailableError) as failed:
            await asyncio.wait_for(connection.query("RETURN 1 AS one", {}), timeout=10)
    assert isinstance(failed.value.__cause__, neo4j_errors.ServiceUnavailable)
    assert proxy.accepted == 2


_MARK = "MERGE (m:RetryMark {id: $id}) RETURN m.id AS id"


async def _mark(tx: neo4j.AsyncTransaction, mark: str) -> str:
    record = await (await tx.run(_MARK, id=mark)).single()
    assert record is not None
    return str(record["id"])


async def _marks(driver: neo4j.AsyncDriver, mark: str) -> int:
    records, _, _ = await driver.execute_query(
        "MATCH (m:RetryMark {id: $id}) WITH count(m) AS n "
        "OPTIONAL MATCH (d:RetryMark {id: $id}) DETACH DELETE d RETURN n",
        id=mark,
    )
    return int(records[0]["n"])


async def test_a_write_is_tried_again_at_once_after_losing_the_server(
    neo4j_auth: tuple[str, tuple[str, str]], driver: neo4j.AsyncDriver
) -> None:
    mark = f"once-{uuid.uuid4()}"
    async with _through_proxy(neo4j_auth, refusals=1) as (proxy, connection):
        assert await connection.write(lambda tx: _mark(tx, mark)) == mark
    assert proxy.accepted == 2
    assert await _marks(driver, mark) == 1


async def test_a_write_to_a_server_that_stays_away_fails_after_one_retry(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """As a read: a mutation against a server that is down answers SERVICE_UNAVAILABLE
    at once, however long `max_retry_time` (transient errors) is."""
    settings = Neo4jSettings(connection_timeout=1.0, acquisition_timeout=2.0, max_retry_time=60)
    async with _through_proxy(neo4j_auth, None, settings) as (proxy, connection):
        with pytest.raises(StoreUnavailableError) as failed:
            await asyncio.wait_for(connection.write(lambda tx: _mark(tx, "never")), timeout=10)
    assert isinstance(failed.value.__cause__, neo4j_errors.ServiceUnavailable)
    assert proxy.accepted == 2


@pytest.mark.parametrize("access", ["read", "write"])
async def test_outage_retry_time_rides_out_a_short_outage(
    neo4j_auth: tuple[str, tuple[str, str]],
    driver: neo4j.AsyncDriver,
    pauses: list[float],
    access: str,
) -> None:
    """With `outage_retry_time` (a bulk load's), losing the server is tried again with
    growing delays until it answers."""
    settings = Neo4jSettings(
        connection_timeout=1.0, acquisition_timeout=2.0, max_retry_time=0, outage_retry_time=30
    )
    mark = f"outage-{uuid.uuid4()}"
    async with _through_proxy(neo4j_auth, 5, settings) as (proxy, connection):
        if access == "write":
            assert await connection.write(lambda tx: _mark(tx, mark)) == mark
        else:
            [record] = await connection.query("RETURN $asked AS answer", {"asked": 3})
            assert record["answer"] == 3
    assert proxy.accepted == 6
    # Once at once, then after each of four growing pauses.
    assert len(pauses) == 4
    assert _growing(pauses)
    if access == "write":
        assert await _marks(driver, mark) == 1


async def test_an_outage_longer_than_outage_retry_time_fails(
    neo4j_auth: tuple[str, tuple[str, str]], pauses: list[float]
) -> None:
    settings = Neo4jSettings(connection_timeout=1.0, acquisition_timeout=2.0, outage_retry_time=1)
    async with _through_proxy(neo4j_auth, None, settings) as (_, connection):
        with pytest.raises(StoreUnavailableError):
            await asyncio.wait_for(connection.write(lambda tx: _mark(tx, "never")), timeout=10)
    assert len(pauses) >= 3
    assert sum(pauses) <= settings.outage_retry_time


class _TransientAtFirst:
    """The real driver, except that the first `failures` statements run (every one while
    `failures` is None) raise `TransientError` instead of reaching the server."""

    def __init__(self, driver: neo4j.AsyncDriver, failures: int | None) -> None:
        self._driver = driver
        self._failures = failures
        self.raised: list[neo4j_errors.TransientError] = []
        self.answered = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    def session(self, **config: Any) -> _Session:
        return _Session(self, self._driver.session(**config))

    def fails_now(self) -> bool:
        if self._failures is None or self._failures > 0:
            if self._failures is not None:
                self._failures -= 1
            return True
        return False


class _Session:
    def __init__(self, owner: _TransientAtFirst, session: neo4j.AsyncSession) -> None:
        self._owner = owner
        self._session = session

    async def __aenter__(self) -> _Session:
        await self._session.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._session.__aexit__(*exc_info)

    def _answer_or_fail(self) -> None:
        if self._owner.fails_now():
            error = neo4j_errors.TransientError("the database cannot answer right now")
            self._owner.raised.append(error)
            raise error
        self._owner.answered += 1

    async def run(self, query: neo4j.Query, parameters: dict[str, Any]) -> neo4j.AsyncResult:
        self._answer_or_fail()
        return await self._session.run(query, parameters)

    async def begin_transaction(self, **config: Any) -> neo4j.AsyncTransaction:
        self._answer_or_fail()
        return await self._session.begin_transaction(**config)

    async def last_bookmarks(self) -> neo4j.Bookmarks:
        return await self._session.last_bookmarks()


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every `asyncio.sleep` of the test, recorded, then slept."""
    recorded: list[float] = []
    sleep = asyncio.sleep

    async def recording(delay: float, result: Any = None) -> Any:
        recorded.append(delay)
        return await sleep(delay, result)

    monkeypatch.setattr(asyncio, "sleep", recording)
    return recorded


def _growing(pauses: list[float]) -> bool:
    return all(later > earlier for earlier, later in itertools.pairwise(pauses))


async def test_a_read_answers_once_a_transient_error_clears(
    driver: neo4j.AsyncDriver, pauses: list[float]
) -> None:
    settings = Neo4jSettings(max_retry_time=5.0)
    flaky = _TransientAtFirst(driver, failures=3)
    connection = Neo4jConnection(flaky, database=None, settings=settings, owned=False)  # type: ignore[arg-type]
    [record] = await connection.query("RETURN $asked AS answer", {"asked": 7})
    assert record["answer"] == 7
    assert (len(flaky.raised), flaky.answered) == (3, 1)
    assert len(pauses) == 3
    assert _growing(pauses)
    assert 0.04 <= pauses[0] <= 0.06


async def test_a_transient_error_that_lasts_fails_within_max_retry_time(
    driver: neo4j.AsyncDriver, pauses: list[float]
) -> None:
    settings = Neo4jSettings(max_retry_time=1.0)
    flaky = _TransientAtFirst(driver, failures=None)
    connection = Neo4jConnection(flaky, database=None, settings=settings, owned=False)  # type: ignore[arg-type]
    with pytest.raises(StoreUnavailableError) as failed:
        await asyncio.wait_for(connection.query("RETURN 1 AS one", {}), timeout=10)
    assert failed.value.__cause__ is flaky.raised[-1]
    # Tried again after each pause, the pauses growing, and no pause past the retry time.
    assert len(flaky.raised) == len(pauses) + 1
    assert len(pauses) >= 3
    assert _growing(pauses)
    assert sum(pauses) <= settings.max_retry_time
    assert flaky.answered == 0


async def test_a_write_commits_once_a_transient_error_clears(
    driver: neo4j.AsyncDriver, pauses: list[float]
) -> None:
    settings = Neo4jSettings(max_retry_time=5.0)
    flaky = _TransientAtFirst(driver, failures=2)
    connection = Neo4jConnection(flaky, database=None, settings=settings, owned=False)  # type: ignore[arg-type]
    mark = f"transient-{uuid.uuid4()}"
    assert await connection.write(lambda tx: _mark(tx, mark)) == mark
    assert (len(flaky.raised), flaky.answered) == (2, 1)
    assert len(pauses) == 2
    assert _growing(pauses)
    assert await _marks(driver, mark) == 1


async def test_the_outage_retry_setting_carries_a_client_over_a_restart(
    neo4j_auth: tuple[str, tuple[str, str]], pauses: list[float]
) -> None:
    """`REDSTRING_NEO4J_OUTAGE_RETRY` (what `redstring load` sets) reaches both stores:
    a write and a retrieve made while the server is away answer once it is back."""
    proxy = _Proxy(_server_address(neo4j_auth), refusals=0)
    tenant = new_tenant()
    async with proxy.serving() as uri:
        settings = Settings(
            backend="neo4j",
            neo4j_uri=uri,
            neo4j_user=neo4j_auth[1][0],
            neo4j_password=neo4j_auth[1][1],
            neo4j_outage_retry=30,
            embeddings="hashing",
        )
        async with Redstring.from_settings(settings) as client:
            entity = Entity.create(tenant, "Outage Lasting", "company")
            proxy.restart(refusals=3)
            await client.upsert([entity])
            proxy.restart(refusals=3)
            found = await client.retrieve("Outage Lasting", tenant, k=1)
            proxy.restart(refusals=3)  # the vector store's own reads
            [query_vector] = await client.embeddings.embed_documents(["Outage Lasting"])
            nearest = await client.vectors.search(query_vector, tenant, k=1)
            await client.delete([entity.id], tenant)
    assert [m.entity.id for m in found.matches] == [entity.id]
    assert [m.entity_id for m in nearest] == [entity.id]
    assert len(pauses) >= 4  # growing pauses while each restart's refusals lasted


def _client_through(uri: str, neo4j_auth: tuple[str, tuple[str, str]], retry: float) -> Redstring:
    settings = Settings(
        backend="neo4j",
        neo4j_uri=uri,
        neo4j_user=neo4j_auth[1][0],
        neo4j_password=neo4j_auth[1][1],
        neo4j_outage_retry=retry,
        embeddings="hashing",
    )
    return Redstring.from_settings(settings)


_CONNECTION_LOG = "redstring.adapters.neo4j.connection"


async def test_a_start_waits_for_a_server_not_up_yet_within_the_outage_retry(
    neo4j_auth: tuple[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    """A client started (its schema, its warm-up) while its server cannot be reached yet,
    as by `redstring load`, waits for it as its writes would, saying once that it waits
    and for how long at most, and starts once the server answers. It stopped at once."""
    proxy = _Proxy(_server_address(neo4j_auth), refusals=4)
    async with proxy.serving() as uri:
        client = _client_through(uri, neo4j_auth, retry=30)
        try:
            with caplog.at_level(logging.INFO, logger=_CONNECTION_LOG):
                await asyncio.wait_for(client.start(), timeout=30)
        finally:
            await client.aclose()
    assert proxy.accepted >= 5
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == _CONNECTION_LOG]
    [(level, waiting), (back_level, back)] = said
    assert level == logging.WARNING
    assert waiting.startswith("Neo4j is unavailable: "), waiting
    assert waiting.endswith("; waiting for it to answer, for up to 30 s (the outage retry time)")
    assert "\n" not in waiting
    assert back_level == logging.INFO
    assert back.startswith("Neo4j answers again, "), back


async def test_a_start_without_an_outage_retry_stops_at_once(
    neo4j_auth: tuple[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    """`REDSTRING_NEO4J_OUTAGE_RETRY=0` (a server's default): after one immediate retry."""
    proxy = _Proxy(_server_address(neo4j_auth), refusals=None)
    async with proxy.serving() as uri:
        client = _client_through(uri, neo4j_auth, retry=0)
        try:
            with (
                caplog.at_level(logging.INFO, logger=_CONNECTION_LOG),
                pytest.raises(StoreUnavailableError) as failed,
            ):
                await asyncio.wait_for(client.start(), timeout=10)
        finally:
            await client.aclose()
    assert isinstance(failed.value.__cause__, neo4j_errors.ServiceUnavailable)
    assert proxy.accepted == 2
    assert [r for r in caplog.records if r.name == _CONNECTION_LOG] == []
