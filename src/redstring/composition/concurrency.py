"""Running two awaitables side by side without leaving one behind when the other fails."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

A = TypeVar("A")
B = TypeVar("B")


async def both(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
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
