"""`LoopShare`: turns past a slice of one loop turn wait for later loop turns, in order."""

from __future__ import annotations

import asyncio

from redstring.api.loop_share import LoopShare


class ManualClock:
    """A clock that moves only when the work under test says it took time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _loop_turns_of(share: LoopShare, clock: ManualClock, count: int) -> list[list[int]]:
    """Start `count` tasks in one loop turn, each taking a turn and then working for one
    second of `clock`; the task numbers that worked in each loop turn, in order."""
    loop_turn = 0
    worked: dict[int, list[int]] = {}

    async def work(number: int) -> None:
        await share.turn()
        worked.setdefault(loop_turn, []).append(number)
        clock.now += 1.0

    tasks = [asyncio.create_task(work(n)) for n in range(count)]
    while not all(t.done() for t in tasks):
        await asyncio.sleep(0)  # one turn of the loop
        loop_turn += 1
    return list(worked.values())


async def test_turns_past_the_slice_wait_for_later_loop_turns_in_order() -> None:
    clock = ManualClock()
    share = LoopShare(3.0, clock=clock)
    batches = await _loop_turns_of(share, clock, 12)
    # Three seconds of work fit in the first loop turn; the queue then goes through
    # two at first (the pace at most doubles), then as many as fit in a slice.
    assert batches == [[0, 1, 2], [3, 4], [5, 6, 7], [8, 9, 10], [11]]
    assert (share.turns, share.waits) == (12, 9)


async def test_a_zero_slice_lets_one_turn_through_per_loop_turn() -> None:
    clock = ManualClock()
    batches = await _loop_turns_of(LoopShare(0.0, clock=clock), clock, 5)
    assert batches == [[0], [1], [2], [3], [4]]


async def test_turns_within_the_slice_never_wait() -> None:
    clock = ManualClock()
    share = LoopShare(100.0, clock=clock)
    assert await _loop_turns_of(share, clock, 20) == [list(range(20))]
    assert share.waits == 0


async def test_a_cancelled_waiting_turn_is_skipped() -> None:
    clock = ManualClock()
    share = LoopShare(0.0, clock=clock)
    order: list[str] = []

    async def work(name: str) -> None:
        await share.turn()
        order.append(name)
        clock.now += 1.0

    first, doomed, last = (asyncio.create_task(work(n)) for n in ("first", "doomed", "last"))
    await asyncio.sleep(0)  # all three take their turn; two queue
    doomed.cancel()
    await asyncio.gather(first, last)
    assert order == ["first", "last"]
    assert doomed.cancelled()


async def test_work_after_the_next_await_slows_the_pace() -> None:
    """Turns whose work goes on after an await, in a later loop turn, are not seen by the
    slice; the loop turns they overrun are, and fewer turns go through after them."""
    clock = ManualClock()
    share = LoopShare(3.0, clock=clock)
    loop_turn = 0
    worked: dict[int, list[int]] = {}

    async def work(number: int) -> None:
        await share.turn()
        worked.setdefault(loop_turn, []).append(number)
        clock.now += 0.5
        await asyncio.sleep(0)
        clock.now += 2.0

    tasks = [asyncio.create_task(work(n)) for n in range(24)]
    while not all(t.done() for t in tasks):
        await asyncio.sleep(0)
        loop_turn += 1
    # Half a second seen in each slice, two more in the loop turn after: without the
    # loop turns' overrun the pace would grow to the six that fit (6, 2, 4, 6, 6).
    assert [len(batch) for batch in worked.values()] == [6, 2, 1, 1, 2, 4, 2, 1, 1, 2, 2]
