"""A server start that fails for a reason it can name (a store unreachable, an index of
another dimension): said in one log line, and told to the `serve` that ran it.

Starlette hands a lifespan's failure to the server as its traceback, which uvicorn logs
whole, chained causes and all. A failure that `StartFailure.say` has logged is handed
over without it, so uvicorn logs only that the start failed; one no one
foresaw keeps its traceback. With several workers, uvicorn stops the parent when one
cannot start but the parent returns as if it had been asked to stop, so a worker also
writes its line into the file `serve` names in `FAILURE_FILE_VARIABLE`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from starlette.types import Message, Send

from redstring.api.errors import described, one_line
from redstring.domain.errors import RedstringError

logger = logging.getLogger("redstring.api")

# Failures of a start that their message explains: a store or provider that does not
# answer or refuses the choice, an index of another dimension, a socket error.
SAID_FAILURES = (RedstringError, OSError)
# Not `REDSTRING_`: every such variable is a setting, and a worker warns of any other.
FAILURE_FILE_VARIABLE = "_REDSTRING_START_FAILURE_FILE"


class StartFailure:
    """Whether an app's start failed with an error it has said (`say`); `quiet` hands
    such a failure to the server without its traceback."""

    def __init__(self) -> None:
        self.said = False

    def say(self, error: BaseException) -> None:
        """Log `error` as one line at ERROR (its traceback at DEBUG), and write that line
        into the file of `FAILURE_FILE_VARIABLE` when `serve` named one."""
        line = f"cannot start: {described(error)}"
        logger.error(line)
        logger.debug("the failed start's traceback", exc_info=error)
        self.said = True
        note(line)

    @staticmethod
    def note(error: BaseException) -> None:
        """Tell `serve` (the file of `FAILURE_FILE_VARIABLE`, when it named one) that the
        start failed with `error`, which uvicorn logs with its traceback."""
        note(f"cannot start: {type(error).__name__}: {one_line(error)}")

    def quiet(self, send: Send) -> Send:
        """`send` for a lifespan, which hands a failure said here to the server with no
        message (uvicorn then logs none)."""

        async def quieted(message: Message) -> None:
            if message["type"] == "lifespan.startup.failed" and self.said:
                message = {**message, "message": ""}
            await send(message)

        return quieted


def note(line: str) -> None:
    """Add `line` to the file of `FAILURE_FILE_VARIABLE`, when `serve` named one: each
    worker that fails adds its own line."""
    named = os.environ.get(FAILURE_FILE_VARIABLE)
    if named:
        with Path(named).open("a", encoding="utf-8") as failures:
            failures.write(line + "\n")


@contextlib.contextmanager
def worker_failures() -> Iterator[Callable[[], bool]]:
    """For `serve` with several workers: a file named to them in `FAILURE_FILE_VARIABLE`,
    and a function telling whether a worker wrote into it (its start failed). The file
    and the variable are gone after the block."""
    descriptor, named = tempfile.mkstemp(prefix="redstring-start-", suffix=".txt")
    os.close(descriptor)
    path = Path(named)
    os.environ[FAILURE_FILE_VARIABLE] = named
    try:
        yield lambda: path.stat().st_size > 0
    finally:
        del os.environ[FAILURE_FILE_VARIABLE]
        path.unlink(missing_ok=True)
