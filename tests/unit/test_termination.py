"""`stopped_at_once` and `interrupted_at_once`: a stop of `serve` while it starts, and
Ctrl-C while another command imports, are never lost, wherever the signal lands
(`api/termination.py`)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from tests.processes import child_environment

# The signal lands inside a weakref callback (an import's module lock has one), or inside
# `__set_name__` (a class body being made): an exception a handler raised there is
# printed and dropped, or turned into a `RuntimeError`, and the program goes on.
_LANDINGS = {
    "weakref callback": """
        class Thing:
            pass

        thing = Thing()
        reference = weakref.ref(thing, lambda _: stop_me())
        del thing
    """,
    "__set_name__": """
        class Field:
            def __set_name__(self, owner, name):
                stop_me()

        class Holder:
            field = Field()
    """,
}


def _signalled_inside(
    landing: str, stop: signal.Signals, context: str, *, ignored: bool = False
) -> tuple[int, str, str]:
    """The status, stdout and stderr of a program that sends itself `stop` at `landing`
    within `with context():`, and would print `went on` and exit 3 if it went on;
    started ignoring `stop` when `ignored` (a job a shell starts in the background)."""
    header = f"""
import os, signal, sys, weakref
from redstring.api.termination import {context}
{f"signal.signal({int(stop)}, signal.SIG_IGN)" if ignored else ""}

def stop_me():
    os.kill(os.getpid(), {int(stop)})
    for _ in range(3):
        pass  # the handler runs at a bytecode boundary: here

with {context}():
"""
    landed = textwrap.indent(textwrap.dedent(_LANDINGS[landing]), "    ")
    return _ran(header + landed + '    print("went on")\nsys.exit(3)\n')


def _ran(code: str) -> tuple[int, str, str]:
    """The status, stdout and stderr of `python -c code`."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("landing", list(_LANDINGS))
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stop_while_starting_ends_the_process_with_status_0(
    landing: str, stop: signal.Signals
) -> None:
    assert _signalled_inside(landing, stop, "stopped_at_once") == (0, "", "")


@pytest.mark.parametrize("landing", list(_LANDINGS))
@pytest.mark.parametrize(
    ("stop", "status", "said"),
    [(signal.SIGINT, 130, "interrupted\n"), (signal.SIGTERM, 143, "terminated\n")],
    ids=["sigint", "sigterm"],
)
def test_a_stop_while_a_command_imports_ends_the_process_at_once(
    landing: str, stop: signal.Signals, status: int, said: str
) -> None:
    """Ctrl-C with status 130: under Python's own handler the `KeyboardInterrupt` is
    dropped there, and the command (`redstring schema`, say) ran to its end with status
    0. SIGTERM with 143, as `load` and `rekey` end for it later."""
    assert _signalled_inside(landing, stop, "interrupted_at_once") == (status, "", said)


@pytest.mark.parametrize("context", ["stopped_at_once", "interrupted_at_once"])
def test_a_signal_the_process_ignores_stays_ignored(context: str) -> None:
    """Ctrl-C at a terminal goes to the foreground job, not to `redstring load ... &`
    that a shell started ignoring it."""
    assert _signalled_inside("__set_name__", signal.SIGINT, context, ignored=True) == (
        3,
        "went on\n",
        "",
    )


def test_the_entry_point_takes_ctrl_c_at_once_while_the_command_line_imports() -> None:
    """`entry_point.main` for a command other than `serve`: a Ctrl-C landing in a class
    body being made while the command line imports exits 130, not a `RuntimeError`."""
    code = textwrap.dedent(
        """
        import os, signal, sys
        from redstring.api import entry_point

        def landing():
            class Field:
                def __set_name__(self, owner, name):
                    os.kill(os.getpid(), signal.SIGINT)
                    for _ in range(3):
                        pass

            class Holder:
                field = Field()

            return lambda argv: 3

        entry_point._command_line = landing
        sys.exit(entry_point.main(["schema"]))
        """
    )
    assert _ran(code) == (130, "", "interrupted\n")


def test_the_handlers_found_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    from redstring.api.termination import (
        interrupted_at_once,
        stopped_at_once,
        terminated_as_stopped,
    )

    with interrupted_at_once():
        assert signal.getsignal(signal.SIGTERM) != before[0]
        assert signal.getsignal(signal.SIGINT) not in (before[1], signal.default_int_handler)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    with stopped_at_once():
        at_once = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
        with terminated_as_stopped():
            # uvicorn, once it has stopped for Ctrl-C, raises it again for this handler.
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == at_once
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


_STOPPED_START = """
import asyncio, os, signal
from redstring.api.termination import StartStopped, stopped_by_signal

seen = []

def server_s(number, frame):  # uvicorn's, which only notes that it should stop
    seen.append(number)

signal.signal(signal.{stop}, server_s)

async def start():
    try:
        await asyncio.sleep(30)
    finally:
        print("start ended")

async def main():
    asyncio.get_running_loop().call_later(0.2, os.kill, os.getpid(), signal.{stop})
    try:
        await stopped_by_signal(start())
    except StartStopped as stop:
        print("stopped by", stop.signal_name)
    print("server's handler called:", seen == [signal.{stop}])
    print("server's handler put back:", signal.getsignal(signal.{stop}) is server_s)

asyncio.run(asyncio.wait_for(main(), 20))
"""


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_signal_while_serve_s_app_starts_ends_its_start_and_reaches_the_server(
    stop: str,
) -> None:
    """`stopped_by_signal`: the start's task is cancelled and `StartStopped` raised, the
    handler found (uvicorn's) called all the same, then put back."""
    status, out, err = _ran(_STOPPED_START.format(stop=stop))
    assert status == 0, err
    assert out.splitlines() == [
        "start ended",
        f"stopped by {stop}",
        "server's handler called: True",
        "server's handler put back: True",
    ], err


def test_a_start_cancelled_from_outside_is_not_taken_for_a_stop() -> None:
    """A cancellation of the caller's own (a lifespan torn down) stays one, even when a
    signal came first: `StartStopped` would swallow it."""
    code = """
import asyncio, os, signal
from redstring.api.termination import StartStopped, stopped_by_signal

signal.signal(signal.SIGTERM, lambda number, frame: None)

async def start():
    try:
        await asyncio.sleep(30)
    finally:
        await asyncio.sleep(0.5)  # what it opened, closing

async def main():
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(stopped_by_signal(start()))
    loop.call_later(0.1, os.kill, os.getpid(), signal.SIGTERM)
    loop.call_later(0.3, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        print("cancelled")
    except StartStopped:
        print("taken for a stop")

asyncio.run(main())
"""
    status, out, err = _ran(code)
    assert (status, out.strip()) == (0, "cancelled"), err
