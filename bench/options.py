"""The `--tiny` option every runnable bench takes: a smoke run of a few seconds.

`make test` runs each bench with `--tiny` (tests/bench) so that a change to
the library cannot break a bench unseen. The figures of a tiny run mean
nothing; only that it runs to the end and prints its table.
"""

from __future__ import annotations

import argparse
from typing import Any


def parse_args(parser: argparse.ArgumentParser, **tiny: Any) -> argparse.Namespace:
    """Parse the command line, `--tiny` replacing the defaults named in `tiny`.

    Options given on the command line still win over the tiny defaults.
    """
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="a smoke run of a few seconds at a tiny size (figures meaningless; make test)",
    )
    args = parser.parse_args()
    if args.tiny:
        parser.set_defaults(**tiny)
        args = parser.parse_args()
    return args
