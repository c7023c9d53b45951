"""`stopped_at_once`: a stop of `serve` while it starts is never lost, wherever the
signal lands (`api/termination.py`)."""

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


@pytest.mark.parametrize("landing", list(_LANDINGS))
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stop_while_starting_ends_the_process_with_status_0(
    landing: str, stop: signal.Signals
) -> None:
    header = f"""
import os, signal, sys, weakref
from redstring.api.termination import stopped_at_once

def stop_me():
    os.kill(os.getpid(), {int(stop)})
    for _ in range(3):
        pass  # the handler runs at a bytecode boundary: here

with stopped_at_once():
"""
    landed = textwrap.indent(textwrap.dedent(_LANDINGS[landing]), "    ")
    code = header + landed + '    print("went on")\nsys.exit(3)\n'
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_handlers_found_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    from redstring.api.termination import stopped_at_once, terminated_as_stopped

    with stopped_at_once():
        at_once = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
        with terminated_as_stopped():
            # uvicorn, once it has stopped for Ctrl-C, raises it again for this handler.
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == at_once
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
