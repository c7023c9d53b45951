"""Calls that could wait for ever (on a FIFO, on a lock), run so that a test fails instead."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def ended_within(seconds: float, run: Callable[[], T], release: Callable[[], None]) -> T:
    """What `run` returns, or raises, run in a thread given `seconds`: when it is still
    running then, `release` ends its wait and the test fails rather than hangs."""
    outcome: list[tuple[bool, object]] = []

    def target() -> None:
        try:
            outcome.append((True, run()))
        except BaseException as exc:  # raised again in the test's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    if thread.is_alive():
        release()
        thread.join(timeout=10)
        pytest.fail(f"still waiting after {seconds:g} s")
    [(returned, value)] = outcome
    if not returned:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]


def without_waiting_on(fifo: Path, run: Callable[[], T]) -> T:
    """`ended_within` 5 s, for a `run` that must not wait on the FIFO `fifo` (opened to
    read, a FIFO waits for a writer: one is opened and closed, which ends the wait)."""
    return ended_within(5, run, lambda: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)))
