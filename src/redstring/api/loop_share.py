"""`LoopShare`: how much of one turn of the event loop a request's resolvers may hold.

asyncio runs every callback that is ready before it polls its sockets again,
and graphql-core makes many ready at once: when a DataLoader batch answers,
every resolver waiting on it resumes in the same turn of the loop, and each
then completes its part of the response synchronously (its objects, their
fields, the next depth's resolver calls). For a large allowed query that is
thousands of resumptions in one turn, during which the
server cannot even read a `/healthz` request. Resolvers therefore take a turn
(`await share.turn()`) after their awaits and before that work: the turns of
one loop turn run until `slice_seconds` of it are spent, the rest queue, and
each later loop turn lets about as many through as fit in a slice, first come
first served. That work makes the next depth's DataLoader calls, so a batch
is sent only once no turn is queued (`when_settled`): one store call per
depth still, as without the share.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable


class LoopShare:
    """One request's share of the event loop: `slice_seconds` of resolver work per turn
    of the loop (see the module docstring). Not thread-safe; one per request.

    `clock` is the time source (seconds); `turns` counts the turns taken and
    `waits` those that had to queue, which tests use instead of timing.
    """

    def __init__(
        self, slice_seconds: float, *, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._slice = slice_seconds
        self._clock = clock
        self._queue: deque[asyncio.Future[None]] = deque()
        self._started: float | None = None  # when the current slice's first turn ran
        self._in_slice = 0  # turns run in the current slice
        self._wake = 1  # queued turns let through per loop turn, learned from the last slice
        self._ticking = False
        self._ticked: float | None = None  # when the last tick ran, while ticks follow on
        self._on_settled: list[Callable[[], object]] = []
        self.turns = 0
        self.waits = 0

    async def turn(self) -> None:
        """Return at once while this loop turn's slice lasts and no turn is queued, else
        queue and return in a later loop turn."""
        self.turns += 1
        if not self._queue and self._fits():
            return
        self.waits += 1
        waiter = asyncio.get_running_loop().create_future()
        self._queue.append(waiter)
        self._tick_soon()
        await waiter
        self._enter()

    def when_settled(self, callback: Callable[[], object]) -> None:
        """Call `callback` in a later loop turn, once no turn is queued: the next turn of
        the loop when none is, as `loop.call_soon` would."""
        if not self._queue and self._started is None:
            asyncio.get_running_loop().call_soon(callback)
            return
        self._on_settled.append(callback)
        self._tick_soon()

    def _fits(self) -> bool:
        if self._started is not None and self._clock() - self._started >= self._slice:
            return False
        self._enter()
        return True

    def _enter(self) -> None:
        if self._started is None:
            self._started = self._clock()
            self._tick_soon()
        self._in_slice += 1

    def _tick_soon(self) -> None:
        if not self._ticking:
            self._ticking = True
            # `call_soon` from a callback runs in the next turn of the loop, after the
            # callbacks ready now (the turns of this slice, and those woken below).
            asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        """Once per loop turn while the request works: close the slice, learn how many
        turns fit in one, and let that many queued ones through to the next loop turn;
        with none queued, schedule what waited for that (`when_settled`)."""
        self._ticking = False
        now = self._clock()
        if self._started is not None:
            per_turn = (now - self._started) / self._in_slice
            fit = int(self._slice / per_turn) if per_turn > 0 else 2 * self._wake
            # A turn's work goes on after its next await, in later loop turns, where
            # the slice does not see it: when the whole loop turn since the last tick
            # ran over the slice, let fewer through, else up to twice as many.
            overran = self._ticked is not None and now - self._ticked > self._slice
            grown = self._wake // 2 if overran else 2 * self._wake
            self._wake = max(1, min(fit, grown))
        self._ticked = now
        self._started = None
        self._in_slice = 0
        if not self._queue:
            settled, self._on_settled = self._on_settled, []
            for callback in settled:
                asyncio.get_running_loop().call_soon(callback)
            self._ticked = None
            return
        woken = 0
        while self._queue and woken < self._wake:
            waiter = self._queue.popleft()
            if not waiter.done():  # a cancelled request's turns are dropped
                waiter.set_result(None)
                woken += 1
        if self._queue or self._on_settled:
            self._tick_soon()
        else:
            self._ticked = None
