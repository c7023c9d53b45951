"""SIGTERM taken as a stop of `serve`, as Ctrl-C is: the process exits 0, where the
signal's default action would kill it (status -15)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class Terminated(BaseException):
    """SIGTERM came to a one-worker server outside uvicorn's own handling of it (not an
    `Exception`, so that no `except Exception` on the way takes it)."""


def _terminate(signal_number: int, frame: FrameType | None) -> None:
    raise Terminated


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
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
