"""SIGTERM taken as a stop of `serve`, as Ctrl-C is: the process exits 0, where the
signal's default action would kill it (status -15); and as Ctrl-C by `load` and
`rekey`, which then exit 143 (`terminated_as_interrupted`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")


class Terminated(BaseException):
    """SIGTERM came to a one-worker server outside uvicorn's own handling of it (not an
    `Exception`, so that no `except Exception` on the way takes it)."""


def _terminate(signal_number: int, frame: FrameType | None) -> None:
    raise Terminated


def _exit_stopped(signal_number: int, frame: FrameType | None) -> None:
    os._exit(0)


def _exit_interrupted(signal_number: int, frame: FrameType | None) -> None:
    if signal_number == signal.SIGTERM:
        os.write(2, b"terminated\n")
        os._exit(EXIT_TERMINATED)
    os.write(2, b"interrupted\n")
    os._exit(EXIT_INTERRUPTED)


# The status of a command Ctrl-C ended (128 + SIGINT), here where the entry point can
# import it before the command line; and of one SIGTERM ended (128 + SIGTERM, what a
# shell reports for a process the signal killed).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


@contextlib.contextmanager
def stopped_at_once() -> Iterator[None]:
    """SIGTERM and SIGINT end the process at once with status 0 while this lasts, then
    the handlers found are put back: for the start of `serve` (`entry_point.main`), which
    has nothing to finish yet and spends most of it importing.

    No exception is raised there: one raised by a handler that runs in a weakref callback
    or a `__del__` (an import runs both) is printed and dropped, and one raised in a
    `__set_name__` becomes a `RuntimeError`, so a stop would be lost or taken for a
    failure. `terminated_as_stopped` takes over from it once the server is built."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal the process was started ignoring (Ctrl-C for a job a shell started in
    # the background) stays ignored.
    previous = {
        number: signal.signal(number, _exit_stopped)
        for number in (signal.SIGTERM, signal.SIGINT)
        if signal.getsignal(number) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def interrupted_at_once() -> Iterator[None]:
    """Ctrl-C ends the process at once with status 130 and the line `interrupted` on
    stderr while this lasts, SIGTERM with 143 and `terminated`, then the handlers found
    are put back: for the imports of a command other than `serve` (`entry_point.main`),
    which has done nothing yet that an exit could lose.

    Python's own handler raises `KeyboardInterrupt` where the signal lands, and an
    import can drop it (`stopped_at_once` says how): the command then ran to its end
    as if never interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal the process was started ignoring (Ctrl-C for a job a shell started in
    # the background) stays ignored.
    previous = {
        number: signal.signal(number, _exit_interrupted)
        for number in (signal.SIGINT, signal.SIGTERM)
        if signal.getsignal(number) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class TerminatedAsInterrupted:
    """SIGTERM taken by a command run with `asyncio.run` (`load`, `rekey`) as Ctrl-C is
    there: the first cancels the command's task (`run`), which finishes or abandons its
    work as for Ctrl-C and raises `CancelledError` out of `asyncio.run` (where Ctrl-C
    raises `KeyboardInterrupt`); a second raises `KeyboardInterrupt` at once, as a
    second Ctrl-C does. `received` says whether one came, for the command to say
    `terminated` and exit `EXIT_TERMINATED`.

    `timeout`, docker, Kubernetes and systemd stop a job with SIGTERM, whose default
    action killed the command without a word (status -15)."""

    def __init__(self) -> None:
        self.received = False

    async def run(self, work: Awaitable[T]) -> T:
        """`work`'s result, awaited with SIGTERM handled so, unless the process was
        started ignoring SIGTERM or this is not the main thread; then the handler found
        is put back."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        previous = signal.getsignal(signal.SIGTERM)
        if task is None or previous is signal.SIG_IGN:
            return await work
        try:
            loop.add_signal_handler(signal.SIGTERM, self._stop, task)
        except (RuntimeError, ValueError):  # not the main thread: signals are not ours
            return await work
        try:
            return await work
        finally:
            loop.remove_signal_handler(signal.SIGTERM)  # which puts back SIG_DFL
            if previous is not None:  # None: a handler set outside Python, lost anyway
                signal.signal(signal.SIGTERM, previous)

    @property
    def ended(self) -> str:
        """How the command stopped by Ctrl-C or SIGTERM says so."""
        return "terminated (SIGTERM)" if self.received else "interrupted"

    @property
    def status(self) -> int:
        """The exit status of the command stopped by Ctrl-C or SIGTERM."""
        return EXIT_TERMINATED if self.received else EXIT_INTERRUPTED

    def _stop(self, task: asyncio.Task[object]) -> None:
        if self.received:
            raise KeyboardInterrupt
        self.received = True
        task.cancel()


@contextlib.contextmanager
def terminated_as_stopped() -> Iterator[None]:
    """SIGTERM raises `Terminated` where it lands, for the caller to take as a stop,
    while this lasts; then the handler found is put back.

    uvicorn's server shuts down on SIGTERM, then puts back the handler it found and
    raises the signal again for it: under the default handler the process then died
    of the signal (status -15) after a clean shutdown. Under this one, `serve` takes
    `Terminated` as stopped, whether uvicorn had shut down for it or not yet started,
    and the command's entry point (`entry_point.main`) does so from before its
    imports. A start that failed is not raised again (uvicorn exits first) and stays a
    failure."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals, and uvicorn handles none there
        return
    previous_term = signal.signal(signal.SIGTERM, _terminate)
    # uvicorn puts back the handler it found for the signal it stopped for and raises the
    # signal again: for Ctrl-C, Python's own, whose `KeyboardInterrupt` uvicorn takes as
    # stopped, and not `stopped_at_once`'s, which would skip what follows the server.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)


class StartStopped(Exception):  # noqa: N818 (a stop, not an error)
    """SIGTERM or Ctrl-C came while `serve`'s app started (`stopped_by_signal`)."""

    def __init__(self, signal_number: int) -> None:
        self.signal_name = signal.Signals(signal_number).name
        super().__init__(f"the start was stopped by {self.signal_name}")


async def stopped_by_signal(work: Coroutine[Any, Any, T]) -> T:
    """`work`'s result, `work` run in a task that SIGTERM and SIGINT cancel: then
    `StartStopped` is raised, once the task has ended (what it opened closed as for any
    cancellation). For the start of `serve`'s app (docs/adr/0015).

    uvicorn handles both signals itself from before the app starts, but only looks at
    them once the start has ended: a start that waits (Neo4j not answering, its outage
    retry) kept the server from stopping until then. The handler found (uvicorn's) is
    kept and called, chained after this one's, and put back once `work` ends; in
    another thread than the main one, or with a signal ignored or left to its default
    action, the handler found is left alone and `work` awaited as it is."""
    loop = asyncio.get_running_loop()
    task = loop.create_task(work)
    received: list[int] = []

    def chained(previous: Callable[[int, FrameType | None], Any]) -> Any:
        def stop(signal_number: int, frame: FrameType | None) -> None:
            if not received:
                received.append(signal_number)
                loop.call_soon_threadsafe(task.cancel)
            previous(signal_number, frame)

        return stop

    found: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(number)
            if callable(previous):
                found[number] = signal.signal(number, chained(previous))
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if received and task.cancelled() and (current is None or not current.cancelling()):
            raise StartStopped(received[0]) from None
        raise
    finally:
        for each, handler in found.items():
            signal.signal(each, handler)
