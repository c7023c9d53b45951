"""A FIFO where a credential file should be: opened to read, it waits for a writer."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def without_waiting_on(fifo: Path, run: Callable[[], T]) -> T:
    """What `run` returns, or raises, run in a thread given 5 s: the test fails, rather than
    hangs, when `run` waits on the FIFO `fifo` (a writer is then opened and closed, which
    ends the wait)."""
    outcome: list[tuple[bool, object]] = []

    def target() -> None:
        try:
            outcome.append((True, run()))
        except BaseException as exc:  # raised again in the test's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout=5)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout=10)
        pytest.fail(f"waited on the FIFO {fifo}")
    [(returned, value)] = outcome
    if not returned:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]
