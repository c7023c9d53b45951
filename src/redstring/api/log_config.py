"""`configure_logging`: where a server process sends redstring's logs."""

from __future__ import annotations

import logging


def configure_logging(level: str) -> None:
    """Send log records at `level` and above to stderr, once per process.

    Called by the processes redstring starts itself (the `serve` command and
    each uvicorn worker); an app embedded elsewhere keeps its host's logging.
    """
    logging.basicConfig(level=level.upper(), format="%(levelname)s %(name)s: %(message)s")
