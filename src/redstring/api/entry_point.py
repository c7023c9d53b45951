"""The `redstring` command's entry point: the installed script, `python -m redstring`
and `python -m redstring.api` start here.

It imports nothing of redstring's but what signal handling needs (`redstring` and
`redstring.api` import their names on first use, `exports.py`), so that `serve` takes
SIGTERM and Ctrl-C as a stop from here on: at once (`stopped_at_once`) during the
second of imports the command line takes (`cli`) and while it builds the server, then
as `terminated_as_stopped` says, until uvicorn handles them itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from redstring.api.termination import EXIT_INTERRUPTED, interrupted_at_once, stopped_at_once


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (`cli.main`, which says what its exit statuses are). `serve`
    stopped by SIGTERM or Ctrl-C at any time exits 0; another command interrupted by
    Ctrl-C before it handles it exits 130, by SIGTERM 143, with no traceback."""
    if _command(sys.argv[1:] if argv is None else argv) == "serve":
        with stopped_at_once():
            return _command_line()(argv)
    try:
        with interrupted_at_once():
            run_command = _command_line()
        return run_command(argv)
    except KeyboardInterrupt:  # Ctrl-C before the command handles it
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _command_line() -> Callable[[Sequence[str] | None], int]:
    from redstring.api.cli import main  # the rest: about a second

    return main


def _command(arguments: Sequence[str]) -> str | None:
    """The command `arguments` name: the first that is not an option (the `redstring`
    parser's own options, `--version` and `--help`, take no value)."""
    return next((argument for argument in arguments if not argument.startswith("-")), None)
