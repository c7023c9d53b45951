"""`Neo4jConnection.write_each`: batches in flight at once, failure and cancellation.

Only the scheduling is under test here, so `write` is replaced by one that
records what runs; the transactions themselves are tested against a real
server in `tests/integration`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from redstring.adapters.neo4j.connection import DEFAULT_SETTINGS, Neo4jConnection

Work = Callable[[Any], Awaitable[None]]


class _Recording(Neo4jConnection):
    """Each work is a number; `write` runs it until its gate opens."""

    def __init__(self, failing: int | None = None) -> None:
        super().__init__(None, database=None, settings=DEFAULT_SETTINGS, owned=False)  # type: ignore[arg-type]
        self.failing = failing
        self.started: list[int] = []
        self.finished: list[int] = []
        self.cancelled: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.gates: dict[int, asyncio.Event] = {}

    def work(self, number: int) -> Work:
        self.gates[number] = asyncio.Event()

        async def run(tx: Any) -> None:
            raise AssertionError("never called: write is replaced")

        run.number = number  # type: ignore[attr-defined]
        return run

    async def write(self, work: Any) -> Any:
        number = work.number
        self.started.append(number)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self.gates[number].wait()
            if number == self.failing:
                raise RuntimeError(f"batch {number} failed")
            self.finished.append(number)
        except asyncio.CancelledError:
            self.cancelled.append(number)
            raise
        finally:
            self.in_flight -= 1


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_works_run_in_order_with_at_most_the_concurrency_in_flight() -> None:
    db = _Recording()
    works = [db.work(n) for n in range(5)]
    task = asyncio.ensure_future(db.write_each(works, concurrency=2))
    await _settle()
    assert db.started == [0, 1]  # the second starts before the first has finished
    for number in range(5):
        db.gates[number].set()
        await _settle()
    await task
    assert db.started == db.finished == [0, 1, 2, 3, 4]
    assert db.most_in_flight == 2


async def test_concurrency_one_is_one_after_the_other() -> None:
    db = _Recording()
    works = [db.work(n) for n in range(3)]
    for gate in db.gates.values():
        gate.set()
    await db.write_each(works, concurrency=1)
    assert db.finished == [0, 1, 2]
    assert db.most_in_flight == 1


async def test_after_a_failure_nothing_more_starts_and_the_work_in_flight_finishes() -> None:
    db = _Recording(failing=1)
    works = [db.work(n) for n in range(6)]
    task = asyncio.ensure_future(db.write_each(works, concurrency=2))
    await _settle()
    db.gates[0].set()
    await _settle()
    assert db.started == [0, 1, 2]
    db.gates[1].set()  # fails while 2 is in flight
    await _settle()
    assert not task.done()  # waits for 2
    db.gates[2].set()
    with pytest.raises(RuntimeError, match="batch 1 failed"):
        await task
    assert db.started == [0, 1, 2]
    assert db.finished == [0, 2]


async def test_cancelled_it_cancels_the_work_in_flight() -> None:
    db = _Recording()
    works = [db.work(n) for n in range(4)]
    task = asyncio.ensure_future(db.write_each(works, concurrency=2))
    await _settle()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # not a timeout: nothing is left waiting
        await asyncio.wait_for(asyncio.shield(task), timeout=5)
    assert db.started == [0, 1]
    assert sorted(db.cancelled) == [0, 1]
    assert db.in_flight == 0
