"""Driver construction with timeouts, sessions, and the translation of driver errors.

A Neo4j that stops answering must fail fast with `StoreUnavailableError`
rather than hang a request: connection, acquisition and retry times are
bounded, and every transaction carries a timeout.

Reads run in sessions of READ access mode, so that a `neo4j://` (routing)
driver sends them to the cluster's followers and read replicas, and writes in
WRITE sessions, which it sends to the leader. Every session of one driver
shares the driver's bookmark manager, so a read sees every write made earlier
through the same driver (in the same process); a read also waits for the
positions of `redstring.ports.consistency.required_positions()` (writes made
through another process), and each write reports its bookmarks there.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

import neo4j
from neo4j import exceptions as neo4j_errors

from redstring.adapters.neo4j import cypher
from redstring.adapters.neo4j.records import Rows, batches_of
from redstring.domain.errors import InvalidInputError, StoreRefusedError, StoreUnavailableError
from redstring.ports.consistency import record_written, required_positions
from redstring.ports.restarts import ServerStart

T = TypeVar("T")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Neo4jSettings:
    """Timeouts (seconds), batch size and write concurrency shared by both stores."""

    connection_timeout: float = 5.0
    acquisition_timeout: float = 10.0
    # How long a statement (`Neo4jConnection.query`) or a write transaction
    # (`Neo4jConnection.write`) is tried again after transient errors, and after losing
    # the server, once at once and then, with growing delays, while `outage_retry_time`
    # lasts: 0 for a server answering requests (a server that is down answers
    # SERVICE_UNAVAILABLE at once), a minute or more for a bulk load.
    max_retry_time: float = 10.0
    outage_retry_time: float = 0.0
    transaction_timeout: float = 30.0
    # Seconds a statement's or a write transaction's answer may come after
    # `transaction_timeout`, the server's own bound, which a server that stalls (a
    # process stopped, a network partition) never enforces: past them the client gives
    # up (`Neo4jConnection.query`, `.write`, `.run_schema`, which waits longer for some).
    answer_slack: float = 10.0
    # Seconds a schema statement that builds an index over the stored data may take: a
    # constraint's CREATE, which answers once its index is built and the data checked
    # (11 s over 1,000,000 nodes on a loaded 2-core machine, past a transaction timeout
    # of 0.5 s, which does not bound it). A stalled server is given up on after it and
    # `answer_slack` (`Neo4jConnection.run_schema`).
    index_build_time: float = 300.0
    batch_size: int = 1000
    # Rows per vector upsert transaction. The vector index is Lucene's: each
    # transaction's vectors become a segment with an HNSW graph of its own, a search
    # visits every segment, and merging small segments builds their graph again.
    # Batches of 5,000 left fewer segments to search and put merges off
    # (docs/neo4j.md, "Vector batches and index segments").
    vector_batch_size: int = 5000
    # Entity and vector upsert transactions in flight at once within one call:
    # such a transaction runs on one server thread, and two batches share no
    # node, so a second one uses a second core without waiting for locks.
    write_concurrency: int = 2


DEFAULT_SETTINGS = Neo4jSettings()


def connect_driver(
    uri: str, auth: tuple[str, str], settings: Neo4jSettings = DEFAULT_SETTINGS
) -> neo4j.AsyncDriver:
    """An async driver with bounded connection and acquisition times. No I/O yet.

    The server sends notifications of severity WARNING and worse only, and none of the
    UNRECOGNIZED classification: the driver logs each one it gets (about 1 KB each).
    Every start would log an INFORMATION notice per index or constraint that already
    exists, and the first start on an empty database a warning per property the
    warm-up reads that no node has yet. redstring's statements are constants checked
    by its tests, so an unrecognised name only ever means "no data yet".
    """
    return neo4j.AsyncGraphDatabase.driver(
        uri,
        auth=auth,
        connection_timeout=settings.connection_timeout,
        connection_acquisition_timeout=settings.acquisition_timeout,
        notifications_min_severity=neo4j.NotificationMinimumSeverity.WARNING,
        notifications_disabled_classifications=[
            neo4j.NotificationDisabledClassification.UNRECOGNIZED
        ],
    )


# The first Bolt version with a vector type: a `Vector` parameter is its components'
# bytes, where a float list is a tagged value per component.
_PACKED_VECTORS = (6, 0)

_UNAVAILABLE = (
    neo4j_errors.ServiceUnavailable,
    neo4j_errors.SessionExpired,
    neo4j_errors.TransientError,
    neo4j_errors.DriverError,
    OSError,
    asyncio.TimeoutError,
)


# A read or write that fails on a transient server error (a cluster electing a leader,
# a follower not yet at the asked bookmark, a lock) is tried again after this delay,
# doubled each time up to `_MAX_RETRY_DELAY`, within `Neo4jSettings.max_retry_time`.
_FIRST_RETRY_DELAY = 0.05
_MAX_RETRY_DELAY = 1.0
# One that lost its member (`SessionExpired`, `ServiceUnavailable`) is tried again this
# many times at once (a routing driver has dropped the member from its table by then,
# and a single server that refuses connections still fails within milliseconds), then
# with the same delays within `Neo4jSettings.outage_retry_time`.
_LOST_MEMBER_RETRIES = 1

_BOOKMARK_ERRORS = (
    "Neo.ClientError.Transaction.InvalidBookmark",
    "Neo.ClientError.Transaction.InvalidBookmarkMixture",
)

# Neo4j refusing the connection itself: after too many wrong passwords, any password
# for a while (a plain `ClientError`, where a wrong one is an `AuthError`); a session's
# database that does not exist, which redstring's statements, never naming another
# (no `USE`), meet only so.
_AUTH_RATE_LIMIT = "Neo.ClientError.Security.AuthenticationRateLimit"
_DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"

_ENTITY_NOT_FOUND = "Neo.ClientError.Statement.EntityNotFound"
_PROCEDURE_FAILED = "Neo.ClientError.Procedure.ProcedureCallFailed"
# How the server names a node or relationship that is gone: the Java exception in a
# procedure's failure message, and the message of its GQL cause.
_NOT_FOUND_EXCEPTION = "EntityNotFoundException"
_NOT_FOUND_MESSAGES = ("Unable to load NODE", "Unable to load RELATIONSHIP")

Conflict = Callable[[neo4j_errors.ClientError], bool]
"""Whether a write transaction's `ClientError` came of a concurrent transaction's commit."""


def deleted_under_it(error: neo4j_errors.ClientError) -> bool:
    """Whether a write failed because a node or relationship it had found was deleted by
    a transaction that committed while the write waited for its lock (reads see commits
    as they land): `EntityNotFound`, or `ProcedureCallFailed` caused by it (a vector
    written by `db.create.setNodeVectorProperty`). A procedure failing on its arguments
    is the caller's error, not this."""
    if error.code == _ENTITY_NOT_FOUND:
        return True
    if error.code != _PROCEDURE_FAILED:
        return False
    if _NOT_FOUND_EXCEPTION in (error.message or ""):
        return True
    cause = error.__cause__
    while isinstance(cause, neo4j_errors.GqlError):
        if (cause.message or "").startswith(_NOT_FOUND_MESSAGES):
            return True
        cause = cause.__cause__
    return False


@contextmanager
def translated_errors(transaction_timeout: float | None = None) -> Iterator[None]:
    """The driver's errors as redstring's: a server that does not answer, or a transaction
    it ended (`_ended_by_server`; its message names `transaction_timeout` when given),
    raises `StoreUnavailableError`; credentials or a database the server refuses,
    `StoreRefusedError`; a bookmark the server does not take, or a setting the driver
    cannot use (`ConfigurationError`: never an outage, so never tried again),
    `InvalidInputError`; any other error propagates as it is."""
    try:
        yield
    except neo4j_errors.ClientError as exc:
        translated = _client_error(exc, transaction_timeout)
        if translated is None:
            raise
        raise translated from exc
    except neo4j_errors.ConfigurationError as exc:
        raise InvalidInputError(_configuration_refused(exc)) from exc
    except _UNAVAILABLE as exc:
        raise StoreUnavailableError(f"Neo4j is unavailable: {exc}") from exc


def _configuration_refused(exc: neo4j_errors.ConfigurationError) -> str:
    """What the driver's `ConfigurationError` says, but of auth: its message there shows
    the value it could not read, which holds the password."""
    if isinstance(exc, neo4j_errors.AuthConfigurationError) or "auth" in str(exc).lower():
        return "the Neo4j driver refuses its auth: give a (user, password) pair of strings"
    return f"the Neo4j driver refuses its settings: {exc}"


async def takes_packed_vectors(driver: neo4j.AsyncDriver) -> bool:
    """Whether the server behind `driver` takes `neo4j.vector.Vector` parameters (Bolt
    6.0 and later). One round trip; `StoreUnavailableError` when the server does not
    answer."""
    with translated_errors():
        info = await driver.get_server_info()
    return info.protocol_version >= _PACKED_VECTORS


class _Outages:
    """The outages waited out (`Neo4jSettings.outage_retry_time`), one a driver at a
    time however many calls wait: logged once when the first call begins to wait (a
    WARNING saying how long at most) and once when a call through the driver answers
    again (INFO). `redstring load` prints the first on its standard error."""

    def __init__(self) -> None:
        self._since: weakref.WeakKeyDictionary[neo4j.AsyncDriver, float] = (
            weakref.WeakKeyDictionary()
        )

    def began(
        self,
        driver: neo4j.AsyncDriver,
        failure: Exception,
        retry_time: float,
        *,
        trying: str = "waiting for it to answer",
    ) -> None:
        if driver in self._since:
            return
        self._since[driver] = time.monotonic()
        _log.warning(
            "%s; %s, for up to %g s (the outage retry time)",
            " ".join(str(failure).split()),
            trying,
            retry_time,
        )

    def ended(self, driver: neo4j.AsyncDriver) -> None:
        if not self._since:  # every call's path: no outage going on
            return
        since = self._since.pop(driver, None)
        if since is not None:
            _log.info("Neo4j answers again, %.1f s after an outage began", time.monotonic() - since)


_outages = _Outages()


class Neo4jConnection:
    """A driver (owned or injected) plus the database name and timeouts.

    An injected driver is never closed here; one made by `connect` is closed
    by `close()`.
    """

    def __init__(
        self,
        driver: neo4j.AsyncDriver,
        *,
        database: str | None,
        settings: Neo4jSettings,
        owned: bool,
    ) -> None:
        self.driver = driver
        self.database = database
        self.settings = settings
        self._owned = owned
        self._packs_vectors: bool | None = None
        self._start_refused = False

    async def close(self) -> None:
        if self._owned:
            await self.driver.close()

    def reads_with(self, other: Neo4jConnection) -> bool:
        """Whether `other` reads the same database through the same driver."""
        return self.driver is other.driver and self.database == other.database

    async def packs_vectors(self) -> bool:
        """`takes_packed_vectors`, asked of the server once, on first use (tried again as
        `query` is), then remembered."""
        if self._packs_vectors is None:
            driver = self.driver
            self._packs_vectors = await self._retried(
                lambda: self._answered(lambda: takes_packed_vectors(driver))
            )
        return self._packs_vectors

    @asynccontextmanager
    async def _session(self, access_mode: str) -> AsyncIterator[neo4j.AsyncSession]:
        """A session of `access_mode` on the driver's bookmark manager (shared by every
        session of the driver), after the unit of work's required positions."""
        required = required_positions()
        async with self.driver.session(
            database=self.database,
            default_access_mode=access_mode,
            bookmark_manager=self.driver.execute_query_bookmark_manager,
            bookmarks=neo4j.Bookmarks.from_raw_values(required) if required else None,
        ) as session:
            yield session

    async def write(
        self,
        work: Callable[[neo4j.AsyncTransaction], Awaitable[T]],
        *,
        conflict: Conflict = deleted_under_it,
    ) -> T:
        """Run `work` in one write transaction (all or nothing), with errors translated,
        tried again as `query` is (`_retried`): never after a commit that may have
        happened (`IncompleteCommit`); and also, as after a transient error, after a
        `ClientError` that `conflict` says a concurrent commit caused (by default, a
        node the write had found deleted under it: `deleted_under_it`)."""

        timeout = self.settings.transaction_timeout

        async def attempt() -> T:
            async with self._session(neo4j.WRITE_ACCESS) as session:
                tx = await session.begin_transaction(timeout=timeout)
                async with tx:
                    done = await work(tx)
                    await tx.commit()
                record_written((await session.last_bookmarks()).raw_values)
                return done

        # The server ends the transaction after `timeout`; `_answered` bounds the wait
        # for its answer (a connection that stalls), which the server's timeout cannot.
        return await self._retried(lambda: self._answered(attempt), conflict=conflict, writes=True)

    async def write_each(
        self,
        works: Iterable[Callable[[neo4j.AsyncTransaction], Awaitable[None]]],
        *,
        concurrency: int,
    ) -> None:
        """Run each of `works` in a write transaction of its own (`write`), started in
        order, at most `concurrency` at a time.

        After a failure no further work starts, the works in flight finish, and
        the first failure in start order is raised. Cancelled, the works in flight
        are cancelled too."""
        in_flight: deque[asyncio.Task[None]] = deque()
        try:
            for work in works:
                if len(in_flight) >= max(1, concurrency):
                    await in_flight.popleft()
                in_flight.append(asyncio.ensure_future(self.write(work)))
            while in_flight:
                await in_flight.popleft()
        except asyncio.CancelledError:
            for task in in_flight:
                task.cancel()
            raise
        finally:
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)

    async def write_rows(
        self, statement: str, rows: list[dict[str, Any]], *, batch_size: int | None = None
    ) -> None:
        """`statement` with `rows` in batches of `batch_size` (default
        `settings.batch_size`) as its `$rows`, a write transaction a batch, at most
        `settings.write_concurrency` in flight (`write_each`)."""

        def work(batch: Rows) -> Callable[[neo4j.AsyncTransaction], Awaitable[None]]:
            async def run(tx: neo4j.AsyncTransaction) -> None:
                await (await tx.run(statement, rows=batch)).consume()

            return run

        batches = batches_of(rows, batch_size or self.settings.batch_size)
        await self.write_each(map(work, batches), concurrency=self.settings.write_concurrency)

    async def query(self, statement: str, parameters: dict[str, Any]) -> list[neo4j.Record]:
        """Run one read statement in an auto-commit transaction of a READ session: a
        single round trip (RUN and PULL pipelined), where a managed transaction
        (`execute_read`) adds BEGIN and COMMIT, two more on a driver of this version.
        Tried again after failures as `_retried` says."""
        timed = neo4j.Query(statement, timeout=self.settings.transaction_timeout)

        async def attempt() -> list[neo4j.Record]:
            async with self._session(neo4j.READ_ACCESS) as session:
                result = await session.run(timed, parameters)
                return [record async for record in result]

        # The server's timeout bounds the statement; `_answered`, the wait for a server
        # that stalls (and so never enforces it).
        return await self._retried(lambda: self._answered(attempt))

    async def _answered(
        self, attempt: Callable[[], Awaitable[T]], *, takes: float | None = None
    ) -> T:
        """`attempt()` in a task of its own, given up when no answer has come within
        `takes` seconds (by default the transaction timeout) and `settings.answer_slack`
        (`StoreUnavailableError` naming the wait, its cause a `TimeoutError`, which
        `_retried` takes for an outage), or when the caller is cancelled (a request's
        deadline). Given up, the task is cancelled and let go (`_let_go`): the caller
        never waits for the driver to close what the attempt held, and the task's failure
        is retrieved, not left for asyncio to log as never retrieved."""
        limit = self.settings.transaction_timeout if takes is None else takes
        wait = limit + self.settings.answer_slack
        task = asyncio.ensure_future(attempt())
        try:
            await asyncio.wait((task,), timeout=wait)
        except asyncio.CancelledError:
            _let_go(task)
            raise
        if not task.done():
            _let_go(task)
            raise StoreUnavailableError(
                f"Neo4j is unavailable: no answer from Neo4j within {wait:g} s"
            ) from TimeoutError()
        return task.result()

    async def _retried(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        conflict: Conflict | None = None,
        writes: bool = False,
    ) -> T:
        """`attempt()`, with the driver's errors translated, tried again after a transient
        server error with growing delays while `settings.max_retry_time` lasts; after
        losing the server, once at once (`_LOST_MEMBER_RETRIES`), then with growing
        delays while `settings.outage_retry_time` lasts; after a `ClientError` that
        `conflict` says a concurrent commit caused, as after a transient error. Each such
        failure is another writer's commit, so one of n writers of the same thing at once
        may fail n - 1 times: time bounds the tries, not a count of them. When `writes`
        (an idempotent write: see below), also after the server ended the transaction
        for its time (`_ENDED_FOR_TIME`), as after an outage. A request's deadline
        cancels it sooner."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        delay, lost = _FIRST_RETRY_DELAY, 0
        while True:
            failure: Exception
            outage = False
            try:
                with translated_errors(self.settings.transaction_timeout):
                    answer = await attempt()
                _outages.ended(self.driver)
                return answer
            except neo4j_errors.ClientError as exc:
                if conflict is None or not conflict(exc):
                    raise
                failure, retry_time = exc, self.settings.max_retry_time
            except StoreUnavailableError as exc:
                failure = exc
                cause = exc.__cause__
                if isinstance(cause, neo4j_errors.IncompleteCommit):
                    raise
                if isinstance(cause, neo4j_errors.SessionExpired | neo4j_errors.ServiceUnavailable):
                    lost += 1
                    if lost <= _LOST_MEMBER_RETRIES:
                        continue
                    retry_time, outage = self.settings.outage_retry_time, True
                elif isinstance(cause, TimeoutError):
                    # A server that stalled (`_answered`): an outage, tried again while
                    # `outage_retry_time` lasts but not at once (the wait was long). A
                    # write given up so may have committed all the same, and trying it
                    # again is safe only because every write transaction is idempotent
                    # in what it leaves: entity and vector upserts MERGE on their key
                    # and set every property (an entity's lookup keys are those its
                    # row names, whatever were there), a relationship upsert replaces
                    # the edge of its id, deletes delete what is there. Only a count a
                    # write returns (entities deleted, keys rewritten) may then leave
                    # out what the attempt given up did.
                    retry_time, outage = self.settings.outage_retry_time, True
                elif isinstance(cause, neo4j_errors.TransientError) and cause.is_retryable():
                    retry_time = self.settings.max_retry_time
                elif (
                    writes
                    and isinstance(cause, neo4j_errors.ClientError)
                    and cause.code in _ENDED_FOR_TIME
                ):
                    # The server ended the write past the transaction timeout, most often
                    # while it waited for a lock another transaction held (another load
                    # writing the same hub entities, a user's open transaction): that
                    # passes, and the write, idempotent as said above and never
                    # committed, is tried again while `outage_retry_time` lasts. A read
                    # so ended is not: it holds no lock, so it was ended for the work it
                    # does, which takes as long again; nor is a transaction an operator
                    # terminated (`Terminated`).
                    retry_time, outage = self.settings.outage_retry_time, True
                else:
                    raise
            pause = delay * random.uniform(0.8, 1.2)
            if loop.time() + pause > started + retry_time:
                raise failure
            if outage:
                _outages.began(self.driver, failure, retry_time, trying=_trying_of(failure))
            await asyncio.sleep(pause)
            delay = min(2 * delay, _MAX_RETRY_DELAY)

    async def last_started(self) -> ServerStart | None:
        """The server that answers a read and when its process started
        (`StartReads.last_started`): one read of its JMX runtime bean. None when the
        server refuses that read (a procedure not allowed), logged once."""
        timed = neo4j.Query(cypher.SERVER_START, timeout=self.settings.transaction_timeout)

        async def attempt() -> ServerStart:
            async with self._session(neo4j.READ_ACCESS) as session:
                result = await session.run(timed)
                record = await result.single(strict=True)
                summary = await result.consume()
            return ServerStart(server=str(summary.server.address), started=str(record["started"]))

        try:
            return await self._retried(lambda: self._answered(attempt))
        except neo4j_errors.ClientError as exc:
            if not self._start_refused:
                self._start_refused = True
                _log.warning(
                    "Neo4j does not tell when it started (%s): a restart between two "
                    "readiness checks goes unnoticed",
                    exc.code,
                )
            return None

    async def run_schema(
        self,
        statement: str,
        parameters: dict[str, Any] | None = None,
        *,
        takes: float | None = None,
    ) -> None:
        """Run one schema statement in an auto-commit transaction, tried again as `query`
        is (`_retried`; every schema statement of redstring's leaves the same schema
        however often it runs). `takes`: the seconds it may wait on a server that
        answers (`db.awaitIndexes`' own); by default `settings.index_build_time` for a
        `CREATE CONSTRAINT`, which builds its index before it answers, else the
        transaction timeout. A server that has not answered within that and
        `settings.answer_slack` is given up on (`_answered`)."""
        if takes is None and statement.lstrip().upper().startswith("CREATE CONSTRAINT"):
            takes = self.settings.index_build_time

        async def attempt() -> None:
            async with self._session(neo4j.WRITE_ACCESS) as session:
                result = await session.run(statement, parameters)
                await result.consume()

        def run() -> Awaitable[None]:
            return self._retried(lambda: self._answered(attempt, takes=takes), writes=True)

        try:
            await run()
        except neo4j_errors.ClientError as exc:
            # Another process making the same rule at once (`serve --workers N`, a load
            # starting beside a server, on a fresh database) can have the server refuse
            # a `CREATE ... IF NOT EXISTS` for the rule it made meanwhile: run again, it
            # finds the rule and answers. Once: a refusal that outlasts it is a rule of
            # another shape in the way (an index where a constraint is asked for).
            if "IF NOT EXISTS" not in statement.upper() or not _schema_raced(exc):
                raise
            await run()


# What the server answers a `CREATE ... IF NOT EXISTS` racing another's for one rule (and
# also, lastingly, one that another rule of its schema stands in the way of).
_SCHEMA_RACES = frozenset(
    f"Neo.ClientError.Schema.{name}"
    for name in (
        "EquivalentSchemaRuleAlreadyExists",
        "IndexWithNameAlreadyExists",
        "ConstraintWithNameAlreadyExists",
        "IndexAlreadyExists",
        "ConstraintAlreadyExists",
    )
)


def _schema_raced(exc: neo4j_errors.ClientError) -> bool:
    return exc.code in _SCHEMA_RACES


# Attempts let go and not yet ended: held so that none is collected before it ends.
_LET_GO: set[asyncio.Future[Any]] = set()


def _let_go(task: asyncio.Future[Any]) -> None:
    """Cancel `task` and leave it to end by itself (the driver closing its connection may
    wait on the network), its outcome retrieved when it does."""
    task.cancel()
    _LET_GO.add(task)
    task.add_done_callback(_ended_after_let_go)


def _ended_after_let_go(task: asyncio.Future[Any]) -> None:
    _LET_GO.discard(task)
    if not task.cancelled() and task.exception() is not None:
        _log.debug("a Neo4j attempt given up ended with %r", task.exception())


# The codes of a transaction the server ended (Neo4j's status codes; a 4.x server's
# `Neo.TransientError.Transaction.*` ones the driver raises as these): waiting for a lock
# (`LockClientStopped`: past the transaction timeout, or ended by an operator or a
# shutdown while it waited), past the timeout the client gave at its start (redstring
# always gives one) or the server's own `db.transaction.timeout`, and terminated by an
# operator (`TERMINATE TRANSACTION`) or the database stopping.
_LOCK_WAIT_ENDED = "Neo.ClientError.Transaction.LockClientStopped"
_CLIENT_TIMEOUT = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
_SERVER_TIMEOUT = "Neo.ClientError.Transaction.TransactionTimedOut"
_TERMINATED = "Neo.ClientError.Transaction.Terminated"
# Those a write is tried again after (`Neo4jConnection._retried`).
_ENDED_FOR_TIME = frozenset((_LOCK_WAIT_ENDED, _CLIENT_TIMEOUT, _SERVER_TIMEOUT))


def _ended_by_server(exc: neo4j_errors.Neo4jError) -> bool:
    return exc.code in _ENDED_FOR_TIME or exc.code == _TERMINATED


def _ended(exc: neo4j_errors.ClientError, transaction_timeout: float | None) -> str:
    """Why the server ended a transaction, in the caller's terms (`_ended_by_server`)."""
    timeout = "the transaction timeout" + (
        "" if transaction_timeout is None else f" ({transaction_timeout:g} s)"
    )
    if exc.code == _LOCK_WAIT_ENDED:
        return (
            "Neo4j ended a transaction that waited for a lock another transaction holds: "
            f"it waited past {timeout}, or an operator or a shutdown ended it"
        )
    if exc.code == _CLIENT_TIMEOUT:
        return (
            f"Neo4j ended a transaction that ran past {timeout}: it waited for locks "
            "other transactions held, or had more work than that time allows"
        )
    if exc.code == _SERVER_TIMEOUT:
        return (
            "Neo4j ended a transaction that ran past the server's own transaction "
            "timeout (db.transaction.timeout in its configuration), shorter than "
            f"{timeout}"
        )
    return "Neo4j ended the transaction: an operator terminated it, or the database is stopping"


def _trying_of(failure: Exception) -> str:
    """What a call that waits after `failure` is doing, for the log (`_Outages.began`)."""
    cause = failure.__cause__
    if isinstance(cause, neo4j_errors.ClientError) and cause.code in _ENDED_FOR_TIME:
        return "trying it again"
    return "waiting for it to answer"


def _client_error(
    exc: neo4j_errors.ClientError, transaction_timeout: float | None = None
) -> Exception | None:
    """What a statement's `ClientError` is raised as: a transaction the server ended
    (`_ended_by_server`) as `StoreUnavailableError`, whose `options` name
    `transaction_timeout` when a longer one may let it through; a refused connection
    as `StoreRefusedError`; a bookmark the server does not take as `InvalidInputError`;
    None: as it is."""
    if isinstance(exc, neo4j_errors.AuthError) or exc.code == _AUTH_RATE_LIMIT:
        # The server's message names no credential; the password is never in it.
        return StoreRefusedError(
            f"Neo4j refuses the user name or password ({exc.message})", options=("auth",)
        )
    if exc.code == _DATABASE_NOT_FOUND:
        return StoreRefusedError(
            f"Neo4j has no such database ({exc.message})", options=("database",)
        )
    if _ended_by_server(exc):
        _log.debug("a transaction ended by Neo4j: %s: %s", exc.code, exc.message)
        longer = exc.code in (_LOCK_WAIT_ENDED, _CLIENT_TIMEOUT)
        return StoreUnavailableError(
            _ended(exc, transaction_timeout),
            options=("transaction_timeout",) if longer else (),
        )
    if exc.code in _BOOKMARK_ERRORS:
        # Neo4j's reason names its own classes: the caller hears only what is wrong.
        _log.debug("a bookmark refused by Neo4j: %s: %s", exc.code, exc.message)
        return InvalidInputError("the bookmark is not one of this database's")
    return None


class OwnedConnection:
    """What both stores share: a `Neo4jConnection`, closed by `close()` or `async with`
    (which closes the driver only when the store made it), and the read of when its
    server started (`StartReads`)."""

    _db: Neo4jConnection

    @property
    def connection(self) -> Neo4jConnection:
        return self._db

    async def close(self) -> None:
        await self._db.close()

    @property
    def start_source(self) -> Hashable:
        """`StartReads.start_source`: the driver, which reaches the same server whatever
        the database (stores built on one driver read one start)."""
        return self._db.driver

    async def last_started(self) -> ServerStart | None:
        """`StartReads.last_started`: the server answering and when it started
        (`Neo4jConnection.last_started`)."""
        return await self._db.last_started()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
