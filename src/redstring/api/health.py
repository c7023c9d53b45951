"""`/healthz` (the process answers) and `/readyz` (its stores answer), for orchestrators."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse

from redstring.api.errors import one_line
from redstring.composition.client import Redstring
from redstring.domain.errors import StoreUnavailableError

logger = logging.getLogger("redstring.api")


def healthz_endpoint(auth: str) -> Callable[[Request], Awaitable[JSONResponse]]:
    """An endpoint answering 200 whenever the process can answer HTTP at all, with the
    authentication mode `auth` (so `none` on a shared host is seen, not guessed)."""

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "auth": auth})

    return healthz


class Readiness:
    """`/readyz`: 200 when the stores answer a cheap read within `timeout` seconds, else
    503 with a reason code.

    A failed check marks the stores cold, and so does a check that finds a store's
    server started again since the last warm-up (`Redstring.check_ready`), though no
    check saw it down. The first check that passes on cold stores starts
    `Redstring.warm_up` in the background and answers 503 `warming_up` until it has
    ended, when checks decide again. A database plans each statement on its first
    run: a Neo4j just restarted took 4 to 18 s to answer the check's reads in time,
    and a request routed to it meanwhile paid that planning.

    A cause is logged, not shown: one WARNING line with its type and message (a store
    being down is an expected condition), its traceback only at DEBUG.
    """

    def __init__(self, services: Callable[[], Redstring], timeout: float) -> None:
        self._services = services
        self._timeout = timeout
        self._cold = False
        self._warming: asyncio.Task[None] | None = None

    async def respond(self, request: Request) -> JSONResponse:
        """The endpoint (`Route("/readyz", readiness.respond)`)."""
        if self._warming is not None:
            return _not_ready("warming_up")
        try:
            warm = await asyncio.wait_for(self._services().check_ready(), self._timeout)
        except Exception as exc:
            self._cold = True
            reason, cause = _failure(exc, self._timeout)
            logger.warning("readiness check failed (%s): %s: %s", reason, type(exc).__name__, cause)
            logger.debug("readiness check failure", exc_info=True)
            return _not_ready(reason)
        if self._cold:
            logger.info("the stores answer again: warming up before reporting ready")
        elif not warm:
            self._cold = True
            logger.info("a store's server started again: warming up before reporting ready")
        else:
            return JSONResponse({"status": "ready"})
        self._warming = asyncio.create_task(self._services().warm_up())
        self._warming.add_done_callback(self._warmed)
        return _not_ready("warming_up")

    def _warmed(self, task: asyncio.Task[None]) -> None:
        """Take an ended warm-up's outcome: warm, or still cold with its cause logged (the
        next check that passes starts another)."""
        self._warming = None
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            logger.warning("warm-up failed: %s: %s", type(exc).__name__, one_line(exc))
            return
        self._cold = False
        logger.info("warm-up done")

    def cancel(self) -> None:
        """Stop a warm-up in flight (the services are closing)."""
        if self._warming is not None:
            self._warming.cancel()


def _not_ready(reason: str) -> JSONResponse:
    return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)


def _failure(exc: Exception, timeout: float) -> tuple[str, str]:
    """The reason code of a failed check and its cause on one line (a driver's message
    may span several)."""
    if isinstance(exc, TimeoutError):
        return "timeout", f"no answer within {timeout} s"
    reason = "store_unavailable" if isinstance(exc, StoreUnavailableError) else "error"
    return reason, one_line(exc)
