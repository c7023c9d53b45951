"""Running two awaitables side by side without leaving one behind when the other fails,
and a blocking call beside the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

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
    When both failed, `finishing`'s is raised as it is (the type a caller catches
    alone), with `work`'s named in a note (`note_failure_of`): neither lost nor left
    for asyncio to log as "never retrieved".
    `ingest` runs a batch's first stage beside the stage of the batch before,
    so the batches a report counts as written are written whole."""
    task = asyncio.ensure_future(work)
    try:
        await asyncio.wait((finishing, task))
    except BaseException:
        task.cancel()
        await asyncio.gather(finishing, task, return_exceptions=True)
        raise
    try:
        finishing.result()
    except BaseException as failure:
        note_failure_of(task, on=failure)
        raise
    return task.result()


def note_failure_of(other: asyncio.Future[Any], *, on: BaseException) -> None:
    """Note on `on`, the failure about to be raised, that `other` (done) failed too: its
    type and message (`add_note`: a traceback shows it, `str(on)` stays as it was).
    `other`'s failure is retrieved, so asyncio logs no "exception was never retrieved"."""
    if other.cancelled():
        return
    failure = other.exception()
    if failure is not None and failure is not on:
        on.add_note(f"the work run beside it failed too: {type(failure).__name__}: {failure}")


def in_daemon_thread(
    call: Callable[[], T], name: str
) -> tuple[asyncio.Future[T], threading.Thread]:
    """`call()` run in a daemon thread of its own, as a future of the running loop, and
    the thread.

    For a read that may block without end (a pipe nobody writes to): cancelling the
    future leaves the thread behind, and the process can still exit, where a thread of
    `asyncio.to_thread`'s executor is waited for at the loop's end and at exit. A caller
    that leaves it behind should have `call` stop soon and wait for the thread a while
    (`ingest` does): a daemon thread still running Python at exit is ended inside what
    it runs, and one ended inside an extension's Rust frames (pydantic-core's
    validation) aborts the process (`FATAL: exception not rethrown`, status 134)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle_with(outcome: Callable[[], None]) -> None:
        if not future.done():  # cancelled meanwhile: nobody waits for it
            outcome()

    def run() -> None:
        try:
            result = call()
        except BaseException as exc:  # handed to the awaiting task, as `to_thread` does
            failure = exc
            outcome = lambda: future.set_exception(failure)  # noqa: E731
        else:
            outcome = lambda: future.set_result(result)  # noqa: E731
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for it
            loop.call_soon_threadsafe(settle_with, outcome)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return future, thread
