"""`/healthz` (the process answers) and `/readyz` (its stores answer), for orchestrators."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse

from redstring.composition.client import Redstring
from redstring.domain.errors import StoreUnavailableError

logger = logging.getLogger("redstring.api")


def healthz_endpoint(auth: str) -> Callable[[Request], Awaitable[JSONResponse]]:
    """An endpoint answering 200 whenever the process can answer HTTP at all, with the
    authentication mode `auth` (so `none` on a shared host is seen, not guessed)."""

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "auth": auth})

    return healthz


def readyz_endpoint(
    services: Callable[[], Redstring], timeout: float
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """An endpoint answering 200 when the stores answer a cheap read within `timeout`
    seconds, else 503 with a reason code (`timeout`, `store_unavailable`, `error`).

    The cause is logged, not shown: one WARNING line with its type and message (a
    store being down is an expected condition), its traceback only at DEBUG."""

    async def readyz(request: Request) -> JSONResponse:
        try:
            await asyncio.wait_for(services().check_ready(), timeout)
        except Exception as exc:
            reason, cause = _failure(exc, timeout)
            logger.warning("readiness check failed (%s): %s: %s", reason, type(exc).__name__, cause)
            logger.debug("readiness check failure", exc_info=True)
            return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        return JSONResponse({"status": "ready"})

    return readyz


def _failure(exc: Exception, timeout: float) -> tuple[str, str]:
    """The reason code of a failed check and its cause on one line (a driver's message
    may span several)."""
    if isinstance(exc, TimeoutError):
        return "timeout", f"no answer within {timeout} s"
    reason = "store_unavailable" if isinstance(exc, StoreUnavailableError) else "error"
    return reason, " ".join(str(exc).split()) or "(no message)"
