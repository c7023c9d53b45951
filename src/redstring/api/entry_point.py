"""The `redstring` command's entry point: the installed script, `python -m redstring`
and `python -m redstring.api` start here.

It imports nothing of redstring's but what signal handling needs (`redstring` and
`redstring.api` import their names on first use, `exports.py`), so that `serve` takes
SIGTERM as a stop from here on: during the second of imports the command line takes
(`cli`), and until uvicorn handles the signal itself.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from redstring.api.termination import Terminated, terminated_as_stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (`cli.main`, which says what its exit statuses are). `serve`
    stopped by SIGTERM or Ctrl-C at any time exits 0; another command interrupted by
    Ctrl-C before it handles it exits 130, with no traceback."""
    serve = _command(sys.argv[1:] if argv is None else argv) == "serve"
    try:
        if not serve:
            return _run(argv)
        with terminated_as_stopped():
            try:
                return _run(argv)
            except Terminated:
                return _STOPPED
    except KeyboardInterrupt:  # Ctrl-C before the command handles it: while it imports
        print("interrupted", file=sys.stderr)
        return _STOPPED if serve else _INTERRUPTED


# `cli.EXIT_OK` and `cli.EXIT_INTERRUPTED`, which may not be imported yet: a server
# stopped by Ctrl-C or SIGTERM has done what it was asked to.
_STOPPED, _INTERRUPTED = 0, 130


def _run(argv: Sequence[str] | None) -> int:
    from redstring.api.cli import main as run_command  # the rest: about a second

    return run_command(argv)


def _command(arguments: Sequence[str]) -> str | None:
    """The command `arguments` name: the first that is not an option (the `redstring`
    parser's own options, `--version` and `--help`, take no value)."""
    return next((argument for argument in arguments if not argument.startswith("-")), None)
