"""`serve`: run the app under uvicorn with the given settings."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn

from redstring.api import bookmarks, connections
from redstring.api.app import create_app
from redstring.api.log_config import configure_logging
from redstring.api.metrics import SHARED_DIRECTORY
from redstring.api.settings import Backend, Settings
from redstring.api.start_failure import worker_failures
from redstring.api.termination import Terminated, terminated_as_stopped

logger = logging.getLogger("redstring.api")

# uvicorn's factory for worker processes; they read their settings from the environment.
APP_FACTORY = "redstring.api.app:app_from_environment"
# The status uvicorn exits with when the server did not start (the app's start failed,
# or the socket could not be bound); a worker's stops uvicorn's supervisor (0.50 and
# later, pyproject's floor).
UVICORN_START_FAILED = 3


def serve(settings: Settings) -> bool:
    """Serve until interrupted, then True; False when the server could not start (the
    app's start failed, in its one worker or in any of several, and the app logged why).

    One worker runs the app in this process; several run `APP_FACTORY` in child
    processes, which rebuild `Settings` from the environment, so what the command line
    sets (`demo`, `host`, `port`) is exported to it first, and without
    `bookmark_secret` the key their bookmarks share (`bookmarks.hand_to_workers`).

    Connections are uvicorn's httptools protocol with a deadline and a size cap for each
    request's head (`connections.HttpToolsWithHeadLimits`, `header_timeout`,
    `max_header_bytes`) and `keep_alive_timeout` between requests. uvicorn's own access
    log is off (the app logs each request, `AccessLog`), and uvicorn configures no
    logging of its own (`log_config=None`): its records reach the handler
    `configure_logging` installs, in the same format."""
    configure_logging(settings.log_level, settings.log_format)
    # Read by each connection's protocol, in this process and in workers (`connections`).
    os.environ[connections.ENVIRONMENT_KEY] = repr(settings.header_timeout)
    os.environ[connections.MAX_HEAD_BYTES_KEY] = str(settings.max_header_bytes)
    os.environ[connections.CORS_ORIGINS_KEY] = ",".join(settings.cors_origins)
    transport: dict[str, Any] = {
        "http": connections.HttpToolsWithHeadLimits,
        "timeout_keep_alive": settings.keep_alive_timeout,
    }
    if settings.workers == 1:
        with shared_metrics(several=False), terminated_as_stopped():
            try:
                uvicorn.run(
                    create_app(settings, stoppable_start=True),
                    host=settings.host,
                    port=settings.port,
                    log_level=settings.log_level,
                    log_config=None,
                    access_log=False,
                    **transport,
                )
            except SystemExit as stopped:  # uvicorn's way out of a start that failed
                if stopped.code != UVICORN_START_FAILED:
                    raise
                return False
            except Terminated:
                pass
        return True
    if settings.backend is Backend.MEMORY:
        logger.warning(
            "%d workers on the memory backend: each worker has its own separate stores",
            settings.workers,
        )
    # What the command line may set, so that each worker's app knows where it listens
    # (its warnings, and whom it answers without authentication, `LoopbackHostsOnly`).
    os.environ["REDSTRING_DEMO"] = "true" if settings.demo else "false"
    os.environ["REDSTRING_HOST"] = settings.host
    os.environ["REDSTRING_PORT"] = str(settings.port)
    # One key for every worker's bookmarks, so that a bookmark one answers another takes.
    bookmarks.hand_to_workers(settings.bookmark_secret_value())
    # uvicorn stops every worker when one cannot start, and returns as when stopped.
    with shared_metrics(several=True), worker_failures() as failed:
        uvicorn.run(
            APP_FACTORY,
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level=settings.log_level,
            log_config=None,
            access_log=False,
            **transport,
        )
        return not failed()


@contextlib.contextmanager
def shared_metrics(*, several: bool) -> Iterator[None]:
    """The metrics of `several` workers in one directory, so that `/metrics` sums them
    (`Metrics`).

    The workers are spawned, so they import prometheus-client after this sets its
    variable. An operator's `PROMETHEUS_MULTIPROC_DIR` is used (by one worker too),
    emptied of earlier runs' values first; else several workers get a temporary
    directory that lives as long as the server, and one worker none."""
    given = os.environ.get(SHARED_DIRECTORY)
    if given:
        for stale in Path(given).glob("*.db"):
            stale.unlink()
    if given or not several:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="redstring-metrics-") as directory:
        os.environ[SHARED_DIRECTORY] = directory
        try:
            yield
        finally:
            del os.environ[SHARED_DIRECTORY]
