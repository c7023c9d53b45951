"""Running two awaitables side by side without leaving one behind when the other fails."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

A = TypeVar("A")
B = TypeVar("B")
T = TypeVar("T")


async def concurrently(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """Both results, run concurrently. When one fails, the other is cancelled (and
    waited for) before the failure is raised as it is, not as an `ExceptionGroup`,
    so a caller's error handling sees the error it would see alone."""
    tasks = (asyncio.ensure_future(first), asyncio.ensure_future(second))
    try:
        a, b = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return a, b


async def nothing() -> None:
    """Work that does nothing: what is "finishing" before a pipeline's first stage,
    and what a pipeline's last `while_finishing` waits beside."""
    return None


async def while_finishing(finishing: asyncio.Future[None], work: Awaitable[T]) -> T:
    """`work`'s result, run while `finishing` (earlier work already under way) ends.

    Unlike `concurrently`, the earlier work is never cut short: it is left to finish
    whatever happens to `work`, and even when the caller is cancelled (then
    `work` is cancelled, `finishing` awaited, and the cancellation raised).
    Once both are done, `finishing`'s failure is raised first, else `work`'s.
    `ingest` runs a batch's first stage beside the stage of the batch before,
    so the batches a report counts as written are written whole."""
    task = asyncio.ensure_future(work)
    try:
        await asyncio.wait((finishing, task))
    except BaseException:
        task.cancel()
        await asyncio.gather(finishing, task, return_exceptions=True)
        raise
    finishing.result()
    return task.result()
