"""`RepeatedLines`: log lines that come back with every request while their cause lasts
(an embedding provider refusing the server's key, a store down), logged once a window
with a count of the ones left out.

The first line of a kind is logged at once and opens a window (`REPEAT_WINDOW_SECONDS`);
the lines of that kind within it are counted, not logged. When a window ends with lines
left out, the last of them is logged with their count, `... (37 like it left out in the
last 60 s; this is the last)`, and a new window opens; when one ends with none left out,
the next line of the kind is logged at once again. A busy server whose provider refuses
every request thus writes one line a minute, not one a request, and every line left out
is counted in a line that follows.

A window is ended by a callback at its end (on the running event loop, `on_running_loop`),
or by the next line of its kind when no callback could be scheduled or it has not run yet,
or by `flush` (the app calls it when it stops). The state is per process, so each worker
of `serve --workers N` counts its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

# How long a kind of line stays quiet after it is logged: long enough that a busy
# server's log stays readable, short enough that the count comes while the cause is news.
REPEAT_WINDOW_SECONDS = 60.0

# Runs a callback after a delay in seconds, or never (then the window waits for the next
# line of its kind, or for `RepeatedLines.flush`).
Schedule = Callable[[float, Callable[[], None]], None]


def on_running_loop(delay: float, callback: Callable[[], None]) -> None:
    """Run `callback` in `delay` seconds on the event loop running in this thread, or
    never when none is: the app's errors are logged on its loop, whose clock is
    monotonic too. It runs in an empty context, not the request's that scheduled it: a
    count is no line of that request (`request_id`)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.call_later(delay, callback, context=contextvars.Context())


@dataclass
class _Window:
    """The time a line of one kind was logged (or a count of them), and what came since."""

    started: float
    ends: float
    left_out: int = 0
    last: tuple[int, str, tuple[object, ...]] = (logging.NOTSET, "", ())
    scheduled: bool = False
    # Kept so that a callback of an ended window does not end the next one.
    token: object = field(default_factory=object)


class RepeatedLines:
    """Logs to `logger` each kind of line at most once a `window` of seconds, then the
    count of those left out (see the module docstring). `clock` is monotonic seconds and
    `schedule` runs a window's end; both are given by tests. Thread-safe: the lines are
    logged under a lock, so a count never comes before the line it follows."""

    def __init__(
        self,
        logger: logging.Logger,
        window: float = REPEAT_WINDOW_SECONDS,
        *,
        clock: Callable[[], float] = time.monotonic,
        schedule: Schedule = on_running_loop,
    ) -> None:
        self._logger = logger
        self._window = window
        self._clock = clock
        self._schedule = schedule
        self._lock = threading.Lock()
        self._windows: dict[str, _Window] = {}

    def log(self, kind: str, level: int, message: str, *args: object) -> bool:
        """Log `message % args` at `level` unless a line of `kind` was logged within the
        window; answer whether it was logged."""
        with self._lock:
            now = self._clock()
            window = self._windows.get(kind)
            if window is not None and now >= window.ends:
                window = self._end(kind, window, now)
            if window is None:
                self._logger.log(level, message, *args)
                self._windows[kind] = _Window(started=now, ends=now + self._window)
                return True
            window.left_out += 1
            window.last = (level, message, args)
            if not window.scheduled:
                window.scheduled = True
                self._schedule(max(window.ends - now, 0.0), partial(self._due, kind, window.token))
            return False

    def flush(self) -> None:
        """Log the count of every kind with lines left out now, and forget every window:
        the next line of each kind is logged at once."""
        with self._lock:
            now = self._clock()
            for kind, window in list(self._windows.items()):
                self._end(kind, window, now)
            self._windows.clear()

    def _due(self, kind: str, token: object) -> None:
        with self._lock:
            window = self._windows.get(kind)
            if window is not None and window.token is token:
                self._end(kind, window, self._clock())

    def _end(self, kind: str, window: _Window, now: float) -> _Window | None:
        """End `window`: with lines left out, log the last with their count and answer the
        window that opens; else answer None, the kind quiet."""
        if not window.left_out:
            del self._windows[kind]
            return None
        level, message, args = window.last
        self._logger.log(
            level,
            f"{message} (%d like it left out in the last %.0f s; this is the last)",
            *args,
            window.left_out,
            now - window.started,
        )
        opened = self._windows[kind] = _Window(started=now, ends=now + self._window)
        return opened
