"""`RepeatedLines`: a kind of line logged once a window, then the count of those left out,
on a clock and a schedule the tests move by hand (no test sleeps)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import sys
import threading
from collections.abc import Callable

import pytest

from redstring.api.repeated_lines import REPEAT_WINDOW_SECONDS, RepeatedLines, on_running_loop

LOGGER = "redstring.tests.repeated"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Scheduled:
    """Keeps each scheduled callback with its delay, to run by hand (`run_due` runs those
    whose time on `clock` has come)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.calls: list[tuple[float, Callable[[], None]]] = []
        self._due: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> None:
        self.calls.append((delay, callback))
        self._due.append((self.clock.now + delay, callback))

    def run_due(self) -> None:
        due = [callback for at, callback in self._due if at <= self.clock.now]
        self._due = [(at, callback) for at, callback in self._due if at > self.clock.now]
        for callback in due:
            callback()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def scheduled(clock: Clock) -> Scheduled:
    return Scheduled(clock)


@pytest.fixture
def lines(clock: Clock, scheduled: Scheduled) -> RepeatedLines:
    return RepeatedLines(logging.getLogger(LOGGER), 60, clock=clock, schedule=scheduled)


def _said(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]


def test_the_window_is_a_minute() -> None:
    assert REPEAT_WINDOW_SECONDS == 60


def test_the_first_line_of_a_kind_is_logged_and_the_next_in_the_window_are_counted(
    lines: RepeatedLines,
    clock: Clock,
    scheduled: Scheduled,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)

    assert lines.log("refused", logging.ERROR, "refused at %s: %s", "retrieve", "401")
    clock.now += 10
    assert not lines.log("refused", logging.ERROR, "refused at %s: %s", "retrieve", "401")
    clock.now += 20
    assert not lines.log("refused", logging.ERROR, "refused at %s: %s", "upsert", "403")

    assert _said(caplog) == [(logging.ERROR, "refused at retrieve: 401")]
    [(delay, window_end)] = scheduled.calls  # one end scheduled for the window, not one a line
    assert delay == 50  # what is left of the window at the first line left out

    clock.now += 30
    window_end()
    assert _said(caplog)[1:] == [
        (
            logging.ERROR,
            "refused at upsert: 403 (2 like it left out in the last 60 s; this is the last)",
        )
    ]


def test_a_window_that_ends_with_none_left_out_lets_the_next_line_through(
    lines: RepeatedLines, clock: Clock, scheduled: Scheduled, caplog: pytest.LogCaptureFixture
) -> None:
    assert lines.log("down", logging.WARNING, "down: %s", "a")
    clock.now += 60
    assert lines.log("down", logging.WARNING, "down: %s", "b")

    assert _said(caplog) == [(logging.WARNING, "down: a"), (logging.WARNING, "down: b")]
    assert scheduled.calls == []


def test_a_count_opens_a_window_so_a_lasting_cause_is_one_line_a_window(
    lines: RepeatedLines, clock: Clock, scheduled: Scheduled, caplog: pytest.LogCaptureFixture
) -> None:
    lines.log("down", logging.WARNING, "down %d", 0)
    for second in range(1, 180):  # one a second for three minutes
        clock.now += 1
        scheduled.run_due()
        lines.log("down", logging.WARNING, "down %d", second)

    assert _said(caplog) == [
        (logging.WARNING, "down 0"),
        (logging.WARNING, "down 59 (59 like it left out in the last 60 s; this is the last)"),
        (logging.WARNING, "down 119 (60 like it left out in the last 60 s; this is the last)"),
    ]
    clock.now += 1  # the cause has gone: the last count comes at its window's end
    scheduled.run_due()
    assert _said(caplog)[3:] == [
        (logging.WARNING, "down 179 (60 like it left out in the last 60 s; this is the last)")
    ]
    clock.now += 60
    scheduled.run_due()  # a window with none left out ends without a line
    assert lines.log("down", logging.WARNING, "down %d", 240)
    assert len(_said(caplog)) == 5


def test_kinds_are_apart(
    lines: RepeatedLines, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    assert lines.log("refused", logging.ERROR, "refused")
    assert lines.log("down", logging.WARNING, "down")
    assert not lines.log("refused", logging.ERROR, "refused")
    assert not lines.log("down", logging.WARNING, "down")

    assert _said(caplog) == [(logging.ERROR, "refused"), (logging.WARNING, "down")]


def test_a_window_past_its_end_is_ended_by_the_next_line_when_its_callback_has_not_run(
    lines: RepeatedLines, clock: Clock, scheduled: Scheduled, caplog: pytest.LogCaptureFixture
) -> None:
    lines.log("down", logging.WARNING, "down %s", "a")
    clock.now += 1
    lines.log("down", logging.WARNING, "down %s", "b")
    clock.now += 100  # the callback is late, or could not be scheduled
    assert not lines.log("down", logging.WARNING, "down %s", "c")

    assert _said(caplog) == [
        (logging.WARNING, "down a"),
        (logging.WARNING, "down b (1 like it left out in the last 101 s; this is the last)"),
    ]
    [(_, stale_end), (delay, window_end)] = scheduled.calls
    stale_end()  # the first window's end, come late: it does not end the second one
    assert len(_said(caplog)) == 2
    assert delay == 60
    window_end()
    assert _said(caplog)[2:] == [
        (logging.WARNING, "down c (1 like it left out in the last 0 s; this is the last)")
    ]


def test_flush_logs_every_count_and_forgets_the_windows(
    lines: RepeatedLines, clock: Clock, scheduled: Scheduled, caplog: pytest.LogCaptureFixture
) -> None:
    lines.log("refused", logging.ERROR, "refused")
    lines.log("down", logging.WARNING, "down")
    lines.log("down", logging.WARNING, "down")
    clock.now += 5

    lines.flush()

    assert _said(caplog)[2:] == [
        (logging.WARNING, "down (1 like it left out in the last 5 s; this is the last)")
    ]
    assert lines.log("refused", logging.ERROR, "refused")  # no window left
    for _, window_end in scheduled.calls:
        window_end()  # a callback after the flush logs nothing
    assert len(_said(caplog)) == 4


def test_lines_from_many_threads_are_each_logged_or_counted(
    clock: Clock, scheduled: Scheduled, caplog: pytest.LogCaptureFixture
) -> None:
    lines = RepeatedLines(logging.getLogger(LOGGER), 60, clock=clock, schedule=scheduled)
    start = threading.Barrier(8)

    def many() -> None:
        start.wait()
        for _ in range(500):
            lines.log("down", logging.WARNING, "down")

    threads = [threading.Thread(target=many) for _ in range(8)]
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads taking turns often, where a race would show
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    [(_, window_end)] = scheduled.calls
    window_end()

    assert _said(caplog) == [
        (logging.WARNING, "down"),
        (logging.WARNING, "down (3999 like it left out in the last 0 s; this is the last)"),
    ]


REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")


async def test_by_default_a_window_ends_on_the_running_loop_outside_the_request() -> None:
    ran: list[str] = []
    REQUEST.set("the request whose line was left out first")
    on_running_loop(0, lambda: ran.append(REQUEST.get()))
    assert ran == []
    for _ in range(10):  # a few turns of the loop, no wait
        await asyncio.sleep(0)
    assert ran == ["none"]


def test_without_a_running_loop_a_window_waits_for_the_next_line(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    lines = RepeatedLines(logging.getLogger(LOGGER), 60, clock=clock)
    lines.log("down", logging.WARNING, "down %s", "a")
    lines.log("down", logging.WARNING, "down %s", "b")
    clock.now += 60
    lines.log("down", logging.WARNING, "down %s", "c")

    assert [said for _, said in _said(caplog)] == [
        "down a",
        "down b (1 like it left out in the last 60 s; this is the last)",
    ]
